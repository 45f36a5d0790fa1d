// pod-cache-rss-go: the client-go reference for bench/informers/pod_cache_rss.cc. It runs one
// pod informer (client-go's SharedIndexInformer, as kube-controller-manager builds it) against
// the API server of a kubeconfig and prints the same figures on one line of key=value pairs:
// initial sync time, RSS before/after sync, bytes per cached pod, and the peak RSS of a relist
// forced by a 410 Expired injected into the watch (the reflector's ordinary path after a
// compaction).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// statusKB reads a VmRSS/VmHWM line of /proc/self/status in kB.
func statusKB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, field+":") {
			v, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return v
		}
	}
	return -1
}

// resetPeak makes VmHWM start again from the current RSS (Linux: clear_refs 5).
func resetPeak() {
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// injectingWatch forwards a real watch and can end it with a synthetic 410 Expired ERROR event.
type injectingWatch struct {
	inner  watch.Interface
	out    chan watch.Event
	inject chan struct{}
	once   sync.Once
	stop   chan struct{}
}

func newInjectingWatch(inner watch.Interface, inject chan struct{}) *injectingWatch {
	w := &injectingWatch{inner: inner, out: make(chan watch.Event), inject: inject, stop: make(chan struct{})}
	go func() {
		defer close(w.out)
		for {
			select {
			case <-w.stop:
				return
			case <-inject:
				status := &metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired,
					Message: "injected: too old resource version"}
				select {
				case w.out <- watch.Event{Type: watch.Error, Object: status}:
				case <-w.stop:
				}
				return
			case e, ok := <-inner.ResultChan():
				if !ok {
					return
				}
				select {
				case w.out <- e:
				case <-w.stop:
					return
				}
			}
		}
	}()
	return w
}

func (w *injectingWatch) Stop() {
	w.once.Do(func() { close(w.stop); w.inner.Stop() })
}
func (w *injectingWatch) ResultChan() <-chan watch.Event { return w.out }

// contentTypeRecorder remembers the Content-Type of the first answer (the LIST, or the watch of a
// streaming list), so the output names the format client-go actually received.
type contentTypeRecorder struct {
	rt   http.RoundTripper
	seen *atomic.Value
}

func (c contentTypeRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil && c.seen.Load() == nil {
		c.seen.Store(resp.Header.Get("Content-Type"))
	}
	return resp, err
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the API server")
	namespace := flag.String("namespace", "", "namespace to cache (\"\" = all)")
	expect := flag.Int("expect", 0, "pods expected in the cache (for bytes per pod)")
	relist := flag.Bool("relist", true, "force a relist (410) after steady state and report its peak")
	stripManagedFields := flag.Bool("strip-managed-fields", false, "transform: drop managedFields (as kube-controller-manager does)")
	contentType := flag.String("content-type", "", "rest.Config ContentType (\"\" = client-go's default, protobuf for built-in types)")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.QPS = -1
	if *contentType != "" {
		cfg.ContentType = *contentType
	}
	var listContentType atomic.Value
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return contentTypeRecorder{rt: rt, seen: &listContentType}
	})
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	runtime.GC()
	debug.FreeOSMemory()
	rssBefore := statusKB("VmRSS")

	inject := make(chan struct{})
	var listsDone atomic.Int64
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
			defer listsDone.Add(1)
			return cs.CoreV1().Pods(*namespace).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			w, err := cs.CoreV1().Pods(*namespace).Watch(ctx, o)
			if err != nil {
				return nil, err
			}
			return newInjectingWatch(w, inject), nil
		},
	}
	informer := cache.NewSharedIndexInformer(lw, &corev1.Pod{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if *stripManagedFields {
		_ = informer.SetTransform(func(obj interface{}) (interface{}, error) {
			if a, err := metaAccessor(obj); err == nil {
				a.SetManagedFields(nil)
			}
			return obj, nil
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	go informer.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		fmt.Fprintln(os.Stderr, "cache did not sync")
		os.Exit(1)
	}
	syncSeconds := time.Since(start).Seconds()
	hwmSync := statusKB("VmHWM")
	cached := len(informer.GetStore().ListKeys())
	time.Sleep(2 * time.Second)
	runtime.GC()
	rssSteady := statusKB("VmRSS")
	n := cached
	if *expect > 0 {
		n = *expect
	}
	bytesPerPod := float64(rssSteady-rssBefore) * 1024 / float64(max(n, 1))
	format := "json"
	if ct, _ := listContentType.Load().(string); strings.Contains(ct, "protobuf") {
		format = "protobuf"
	}
	fmt.Printf("impl=client-go format=%s pods=%d sync_s=%.2f rss_before_kb=%d hwm_sync_kb=%d rss_steady_kb=%d bytes_per_pod=%.0f",
		format, cached, syncSeconds, rssBefore, hwmSync, rssSteady, bytesPerPod)

	if *relist {
		resetPeak()
		listsBefore := listsDone.Load()
		relistStart := time.Now()
		inject <- struct{}{}
		for listsDone.Load() == listsBefore {
			time.Sleep(10 * time.Millisecond)
		}
		listSeconds := time.Since(relistStart).Seconds()
		// Give the informer time to apply the Replace (every item is re-delivered).
		time.Sleep(3 * time.Second)
		hwmRelist := statusKB("VmHWM")
		fmt.Printf(" relist_list_s=%.2f hwm_relist_kb=%d relist_peak_over_steady=%.3f",
			listSeconds, hwmRelist, float64(hwmRelist)/float64(rssSteady))
	}
	fmt.Println()
}

func metaAccessor(obj interface{}) (metav1.Object, error) {
	if o, ok := obj.(metav1.Object); ok {
		return o, nil
	}
	return nil, fmt.Errorf("not a metav1.Object")
}
