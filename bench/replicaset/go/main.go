// pod-churn: deletes pods of one namespace at a fixed rate and measures, for each delete, the
// time from sending it to seeing a replacement pod's ADDED event in a watch. With -group-label
// (e.g. "rs", one value per ReplicaSet) the deletes go round-robin over the groups and each new
// pod is paired with the oldest unanswered delete of its own group, so replacements made out of
// order by different ReplicaSets are not mixed up; without it there is one group, and the i-th
// delete is paired with the i-th pod created after the start (a ReplicaSet controller creates
// replacements without knowing which pod went). Prints one line of key=value pairs: n, p50/p90/
// p99/max in ms. Used by bench/replicaset/reaction_latency.sh; client-go with no client-side
// rate limit, one HTTP/2 connection, so the load generator itself adds as little as it can.
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
	groupLabel := flag.String("group-label", "", "label whose values group the pods (one per ReplicaSet); deletes go round-robin over the groups")
	flag.Parse()
	groupOf := func(p *corev1.Pod) string {
		if *groupLabel == "" {
			return ""
		}
		return p.Labels[*groupLabel]
	}

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
	// Live pods by group, and the groups in a fixed order for the round-robin.
	live := map[string]map[string]bool{}
	var groups []string
	setLive := func(g, name string, ok bool) {
		m := live[g]
		if m == nil {
			m = map[string]bool{}
			live[g] = m
			groups = append(groups, g)
		}
		if ok {
			m[name] = true
		} else {
			delete(m, name)
		}
	}
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp == nil {
			setLive(groupOf(p), p.Name, true)
		}
	}
	sort.Strings(groups)
	w, err := cs.CoreV1().Pods(*ns).Watch(ctx, metav1.ListOptions{
		LabelSelector: *selector, ResourceVersion: list.ResourceVersion})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Deletes sent and not yet answered by a new pod, per group, oldest first; and the latencies
	// of those that were.
	pending := map[string][]time.Time{}
	var lat []float64
	seen, unpaired := 0, 0
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
					g := groupOf(p)
					setLive(g, p.Name, p.DeletionTimestamp == nil)
					if q := pending[g]; len(q) > 0 {
						lat = append(lat, float64(t.Sub(q[0]).Microseconds())/1000)
						pending[g] = q[1:]
					} else {
						unpaired++
					}
					seen++
					if seen == *n {
						close(allSeen)
					}
				case watch.Deleted:
					setLive(groupOf(p), p.Name, false)
				case watch.Modified:
					if p.DeletionTimestamp != nil {
						setLive(groupOf(p), p.Name, false)
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

	sent := 0
	var failures, skipped int
	nextGroup := 0
	var wg sync.WaitGroup
	interval := time.Duration(float64(time.Second) / *rate)
	next := time.Now()
	// However the run goes, it ends: at most a minute past the time its deletes should take.
	deadline := next.Add(time.Duration(float64(*n) / *rate * float64(time.Second)) + time.Minute)
	grace := int64(0)
	for sent < *n && time.Now().Before(deadline) {
		time.Sleep(time.Until(next))
		next = next.Add(interval)
		mu.Lock()
		// The next group (round-robin) that has a live pod; any live pod of it.
		name := ""
		for i := 0; i < len(groups) && name == ""; i++ {
			g := groups[(nextGroup+i)%len(groups)]
			for k := range live[g] {
				name = k
				break
			}
			if name != "" {
				nextGroup = (nextGroup + i + 1) % len(groups)
				delete(live[g], name)
				pending[g] = append(pending[g], time.Now())
				sent++
			}
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
	fmt.Printf("n=%d seen=%d paired=%d p50=%.1f p90=%.1f p99=%.1f max=%.1f failures=%d skipped=%d unpaired=%d groups=%d rewatches=%d\n",
		sent, seen, len(lat), q(0.5), q(0.9), q(0.99), q(1), failures, skipped, unpaired, len(groups), rewatches)
}
