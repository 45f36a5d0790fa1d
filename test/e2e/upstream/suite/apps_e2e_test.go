// Package appsconformance is a small test main for upstream's sig-apps e2e cases. It is not
// built by CMake: hack/e2e-upstream.sh copies it into a generated Go module that requires
// k8s.io/kubernetes at the pinned version and builds it with `go test -c`. Importing only
// test/e2e/apps (not the whole test/e2e tree) keeps the binary, and its cold build, much smaller
// than upstream's e2e.test, while the cases themselves are upstream's, unchanged.
package appsconformance

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"k8s.io/kubernetes/test/e2e/framework"
	"k8s.io/kubernetes/test/e2e/framework/config"
	e2enode "k8s.io/kubernetes/test/e2e/framework/node"

	// The sig-apps cases register themselves with ginkgo when imported.
	_ "k8s.io/kubernetes/test/e2e/apps"
)

// TestMain wires flags the way upstream's e2e test main does (framework flags, then
// framework.AfterReadingAllFlags), but without the provider, image pre-pull and
// conformance-listing extras that a KWOK test bed has no use for.
func TestMain(m *testing.M) {
	config.CopyFlags(config.Flags, flag.CommandLine)
	framework.RegisterCommonFlags(flag.CommandLine)
	framework.RegisterClusterFlags(flag.CommandLine)
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %v\n", flag.Args())
		os.Exit(2)
	}
	framework.AfterReadingAllFlags(&framework.TestContext)
	os.Exit(m.Run())
}

// Before any case runs, every node must be schedulable, as upstream's setupSuite demands; the
// test bed's KWOK nodes are Ready from the start, so this fails only on a broken test bed.
var _ = ginkgo.SynchronizedBeforeSuite(func(ctx context.Context) []byte {
	c, err := framework.LoadClientset()
	framework.ExpectNoError(err, "loading the client for the test bed")
	framework.ExpectNoError(e2enode.WaitForAllNodesSchedulable(ctx, c, framework.NewTimeoutContext().NodeSchedulable))
	return nil
}, func(context.Context, []byte) {})

func TestAppsConformance(t *testing.T) {
	gomega.RegisterFailHandler(framework.Fail)
	suiteConfig, reporterConfig := framework.CreateGinkgoConfig()
	ginkgo.RunSpecs(t, "sig-apps Deployment/ReplicaSet on the kcm test bed", suiteConfig, reporterConfig)
}
