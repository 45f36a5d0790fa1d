// request-cpu-go: client-go's own CPU cost of one API request, the reference for
// bench/client/request_cpu (same request mix, same threads): T goroutines each send their share
// of K requests through one client (client-side rate limit off), a create of a small Event then a
// GET of it. Bodies go and come back as raw JSON bytes through the clientset's REST client, as
// ours does (no typed encode/decode on either side). Prints the process's CPU time (user +
// system, getrusage) per request, in the same line format as request_cpu.
//
// -http1 offers only HTTP/1.1 in ALPN (one TLS connection per idle slot, as ours); without it
// client-go's default applies: HTTP/2, every goroutine multiplexed over one connection.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

func eventManifest(name string) []byte {
	return []byte(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"` + name +
		`"},"involvedObject":{"kind":"ReplicaSet","namespace":"bench-client","name":"rs",` +
		`"apiVersion":"apps/v1"},"reason":"SuccessfulCreate","message":"Created pod: ` + name +
		`","source":{"component":"replicaset-controller"},"type":"Normal",` +
		`"count":1,"eventTime":null}`)
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig")
	ns := flag.String("namespace", "bench-client", "namespace of the Events")
	count := flag.Int("count", 2000, "requests (half creates, half GETs)")
	threads := flag.Int("threads", 10, "goroutines")
	http1 := flag.Bool("http1", false, "HTTP/1.1 only (default: client-go's HTTP/2)")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	if *http1 {
		cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: *ns}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, nsObj, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		fmt.Fprintln(os.Stderr, "namespace:", err)
		os.Exit(1)
	}
	rc := cs.CoreV1().RESTClient()
	run := strconv.FormatInt(time.Now().UnixNano(), 10)
	var next, failed atomic.Int64
	cpu0 := cpuSeconds()
	t0 := time.Now()
	var wg sync.WaitGroup
	for t := 0; t < *threads; t++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(2) - 2
				if i >= int64(*count) {
					return
				}
				name := "g" + run + "-" + strconv.FormatInt(i, 10)
				if _, err := rc.Post().Namespace(*ns).Resource("events").
					SetHeader("Content-Type", "application/json").Body(eventManifest(name)).
					Do(ctx).Raw(); err != nil {
					failed.Add(1)
				}
				if _, err := rc.Get().Namespace(*ns).Resource("events").Name(name).
					Do(ctx).Raw(); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	cpu := cpuSeconds() - cpu0
	wall := time.Since(t0).Seconds()
	proto := "h2"
	if *http1 {
		proto = "http/1.1"
	}
	fmt.Printf("requests %d threads %d failed %d wall %.2f s cpu %.3f s cpu/request %.1f us (client-go %s)\n",
		*count, *threads, failed.Load(), wall, cpu, 1e6*cpu/float64(*count), proto)
	if failed.Load() != 0 {
		os.Exit(1)
	}
}
