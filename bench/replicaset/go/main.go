// pod-churn: deletes pods of one namespace at a fixed rate and measures, for each delete, the
// time from sending it to seeing a replacement pod's ADDED event in a watch (the i-th delete is
// paired with the i-th pod created after the start: a ReplicaSet controller creates replacements
// without knowing which pod went). Prints one line of key=value pairs: n, p50/p90/p99/max in ms.
// Used by bench/replicaset/reaction_latency.sh; client-go with no client-side rate limit, one
// HTTP/2 connection, so the load generator itself adds as little as it can.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig")
	ns := flag.String("namespace", "", "namespace of the ReplicaSet's pods")
	selector := flag.String("selector", "", "label selector of the pods")
	rate := flag.Float64("rate", 20, "deletes per second")
	n := flag.Int("n", 600, "deletes")
	flag.Parse()

	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg.QPS = -1 // No client-side limiter.
	cs := kubernetes.NewForConfigOrDie(cfg)
	ctx := context.Background()

	list, err := cs.CoreV1().Pods(*ns).List(ctx, metav1.ListOptions{LabelSelector: *selector})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	live := map[string]bool{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			live[p.Name] = true
		}
	}
	w, err := cs.CoreV1().Pods(*ns).Watch(ctx, metav1.ListOptions{
		LabelSelector: *selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var seen []time.Time // ADDED events, in arrival order.
	allSeen := make(chan struct{})
	stopped := make(chan struct{})
	rewatches := 0
	go func() {
		// The server may end a watch at any time; without a new one no replacement would be seen
		// and the deleter, finding no live pod, would wait forever. Watch again from the last
		// resourceVersion seen.
		lastRV := list.ResourceVersion
		for {
			for ev := range w.ResultChan() {
				t := time.Now()
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				mu.Lock()
				lastRV = p.ResourceVersion
				switch ev.Type {
				case watch.Added:
					seen = append(seen, t)
					live[p.Name] = p.DeletionTimestamp == nil
					if len(seen) == *n {
						close(allSeen)
					}
				case watch.Deleted:
					delete(live, p.Name)
				case watch.Modified:
					if p.DeletionTimestamp != nil {
						delete(live, p.Name)
					}
				}
				mu.Unlock()
			}
			select {
			case <-stopped:
				return
			default:
			}
			nw, err := cs.CoreV1().Pods(*ns).Watch(ctx, metav1.ListOptions{
				LabelSelector: *selector, ResourceVersion: lastRV})
			if err != nil {
				fmt.Fprintln(os.Stderr, "re-watch:", err)
				return
			}
			mu.Lock()
			rewatches++
			w = nw
			mu.Unlock()
		}
	}()

	sent := make([]time.Time, 0, *n)
	var failures, skipped int
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / *rate)
	next := time.Now()
	// However the run goes, it ends: at most a minute past the time its deletes should take.
	deadline := next.Add(time.Duration(float64(*n) / *rate * float64(time.Second)) + time.Minute)
	grace := int64(0)
	for len(sent) < *n && time.Now().Before(deadline) {
		time.Sleep(time.Until(next))
		next = next.Add(interval)
		mu.Lock()
		name := ""
		for k, ok := range live {
			if ok {
				name = k
				break
			}
		}
		if name != "" {
			delete(live, name)
			sent = append(sent, time.Now())
		}
		mu.Unlock()
		if name == "" {
			skipped++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := cs.CoreV1().Pods(*ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			if err != nil {
				mu.Lock()
				failures++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	select {
	case <-allSeen:
	case <-time.After(60 * time.Second):
	}
	close(stopped)
	mu.Lock()
	defer mu.Unlock()
	w.Stop()
	var lat []float64
	for i := 0; i < len(sent) && i < len(seen); i++ {
		lat = append(lat, float64(seen[i].Sub(sent[i]).Microseconds())/1000)
	}
	sort.Float64s(lat)
	q := func(p float64) float64 {
		if len(lat) == 0 {
			return -1
		}
		i := int(p*float64(len(lat))+0.5) - 1
		if i < 0 {
			i = 0
		}
		if i >= len(lat) {
			i = len(lat) - 1
		}
		return lat[i]
	}
	fmt.Printf("n=%d seen=%d p50=%.1f p90=%.1f p99=%.1f max=%.1f failures=%d skipped=%d rewatches=%d\n",
		len(sent), len(seen), q(0.5), q(0.9), q(0.99), q(1), failures, skipped, rewatches)
}
