// CoreDNS with only the plugins the real node's Corefile uses (hack/localcluster/node.py:
// bind, errors, kubernetes), the way CoreDNS documents a build of its own
// (core/dnsserver/directives.go:8-19 at v1.15.0). Its own main imports every plugin
// (core/plugin/zplugin.go), cloud SDKs and all: about 420 s of CPU to build, most of a
// cold CI's CoreDNS time, for plugins the node never loads.
package main

import (
	"log"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
)

func main() {
	// In execution order, as in core/dnsserver/zdirectives.go.
	if err := dnsserver.SetDirectives([]string{"bind", "errors", "kubernetes"}); err != nil {
		log.Fatal(err)
	}
	coremain.Run()
}
