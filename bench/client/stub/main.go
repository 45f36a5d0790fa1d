// stub: a Go net/http HTTPS server (HTTP/1.1, the API server's idle and header timeouts) that
// answers request_cpu's requests as the API server would (an Event create: 201 and the object; a
// GET: 200 and the object, with the API server's response headers), so the client's cost per
// request can be measured without a testbed and without the API server's own CPU beside it.
// ?watch=true streams -watch-events Event frames (each flushed, -watch-gap apart), then ends.
// Writes a kubeconfig (-kubeconfig; bearer token, CA data in ./ca.crt) for the address it listens
// on, and prints that address.
//
// Usage: go build -o stub . && ./stub -kubeconfig admin.kubeconfig [-delay 1ms]
//
//	[-watch-events 3000 -watch-gap 500us]
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	kc := flag.String("kubeconfig", "stub.kubeconfig", "kubeconfig to write")
	watchEvents := flag.Int("watch-events", 0, "frames a watch sends before it ends")
	delay := flag.Duration("delay", 0, "wait before answering each non-watch request")
	watchGap := flag.Duration("watch-gap", 0, "pause after each watch frame")
	flag.Parse()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stub"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign}
	der, _ := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &key.PublicKey, key)
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	kder, _ := x509.MarshalECPrivateKey(key)
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
	cert, _ := tls.X509KeyPair(certPEM, keyPEM)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		panic(err)
	}
	os.WriteFile("ca.crt", certPEM, 0644)
	os.WriteFile(*kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: stub
  cluster:
    server: https://%s
    certificate-authority: %s/ca.crt
users:
- name: stub
  user:
    token: abcdefghijklmnopqrstuvwxyz0123456789
contexts:
- name: stub
  context: {cluster: stub, user: stub}
current-context: stub
`, ln.Addr().String(), mustWd())), 0644)
	obj := func(name string) string {
		return `{"kind":"Event","apiVersion":"v1","metadata":{"name":"` + name + `","namespace":"bench-client","uid":"0b5c1f0e-6d0c-4a59-9d43-8b8f0e7c2d11","resourceVersion":"123456","creationTimestamp":"2026-12-02T01:00:00Z","managedFields":[{"manager":"request_cpu","operation":"Update","apiVersion":"v1","time":"2026-12-02T01:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:count":{},"f:involvedObject":{},"f:message":{},"f:reason":{},"f:source":{"f:component":{}},"f:type":{}}}]},"involvedObject":{"kind":"ReplicaSet","namespace":"bench-client","name":"rs","apiVersion":"apps/v1"},"reason":"SuccessfulCreate","message":"Created pod: ` + name + `","source":{"component":"replicaset-controller"},"firstTimestamp":null,"lastTimestamp":null,"count":1,"type":"Normal","eventTime":null,"reportingComponent":"","reportingInstance":""}`
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if *delay > 0 && r.URL.Query().Get("watch") != "true" {
			time.Sleep(*delay)
		}
		hd := w.Header()
		hd.Set("Audit-Id", "6f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b")
		hd.Set("Cache-Control", "no-cache, private")
		hd.Set("Content-Type", "application/json")
		hd.Set("X-Kubernetes-Pf-Flowschema-Uid", "1a2b3c4d-5e6f-7081-92a3-b4c5d6e7f809")
		hd.Set("X-Kubernetes-Pf-Prioritylevel-Uid", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
		if r.URL.Query().Get("watch") == "true" {
			fl := w.(http.Flusher)
			w.WriteHeader(200)
			for i := 0; i < *watchEvents; i++ {
				io.WriteString(w, `{"type":"MODIFIED","object":`+obj(fmt.Sprintf("e%d", i))+"}\n")
				fl.Flush()
				if *watchGap > 0 {
					time.Sleep(*watchGap)
				}
			}
			return
		}
		parts := strings.Split(r.URL.Path, "/")
		name := parts[len(parts)-1]
		if r.Method == "POST" {
			w.WriteHeader(201)
			io.WriteString(w, obj("created"))
			return
		}
		io.WriteString(w, obj(name))
	})
	srv := &http.Server{Handler: h, IdleTimeout: 90 * time.Second, ReadHeaderTimeout: 32 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}}
	fmt.Println(ln.Addr().String())
	srv.Serve(tls.NewListener(ln, srv.TLSConfig))
}

func mustWd() string { d, _ := os.Getwd(); return d }
