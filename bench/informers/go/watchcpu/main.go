// watch-cpu-go: the client-go reference for bench/informers/watch_cpu.cc — upstream's watch side
// alone. Three informers (pods, ReplicaSets, Deployments) from one client-go SharedInformerFactory
// with protobuf as kube-controller-manager asks for it, each with a handler that enqueues the
// object's key into a workqueue drained by 5 goroutines that call Done and nothing else. Runs
// until SIGINT or SIGTERM, then prints the same key=value line as watch_cpu.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

type usage struct {
	user, system float64
	switches     int64
}

func now() usage {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	s := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return usage{s(u.Utime), s(u.Stime), u.Nvcsw + u.Nivcsw}
}

// sink is one kind's queue, its 5 workers and the count of notifications fed to it.
type sink struct {
	queue         workqueue.TypedInterface[string]
	notifications atomic.Int64
}

func newSink() *sink {
	s := &sink{queue: workqueue.NewTyped[string]()}
	for i := 0; i < 5; i++ { // --concurrent-{replicaset,deployment}-syncs' default
		go func() {
			for {
				key, quit := s.queue.Get()
				if quit {
					return
				}
				s.queue.Done(key)
			}
		}()
	}
	return s
}

func (s *sink) enqueue(obj interface{}) {
	s.notifications.Add(1)
	if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
		s.queue.Add(key)
	}
}

func (s *sink) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    s.enqueue,
		UpdateFunc: func(_, obj interface{}) { s.enqueue(obj) },
		DeleteFunc: s.enqueue,
	}
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	contentType := flag.String("content-type", "application/vnd.kubernetes.protobuf", "as --kube-api-content-type")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	config.QPS = -1
	config.ContentType = *contentType
	client := kubernetes.NewForConfigOrDie(config)
	factory := informers.NewSharedInformerFactory(client, 12*time.Hour)
	sinks := []*sink{newSink(), newSink(), newSink()}
	for i, inf := range []cache.SharedIndexInformer{
		factory.Core().V1().Pods().Informer(),
		factory.Apps().V1().ReplicaSets().Informer(),
		factory.Apps().V1().Deployments().Informer(),
	} {
		if _, err := inf.AddEventHandler(sinks[i].handler()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	stop := make(chan struct{})
	start := now()
	factory.Start(stop)
	for resource, synced := range factory.WaitForCacheSync(stop) {
		if !synced {
			fmt.Fprintf(os.Stderr, "%v did not sync\n", resource)
			os.Exit(1)
		}
	}
	fmt.Fprintln(os.Stderr, "watch-cpu-go: synced")
	<-signals
	end := now()
	fmt.Printf("watch_cpu_go user_s=%.2f system_s=%.2f cpu_s=%.2f context_switches=%d pods=%d "+
		"replicasets=%d deployments=%d\n",
		end.user-start.user, end.system-start.system,
		end.user-start.user+end.system-start.system, end.switches-start.switches,
		sinks[0].notifications.Load(), sinks[1].notifications.Load(), sinks[2].notifications.Load())
	close(stop)
}
