// etcd for hack/local-cluster. The etcd server module carries replace directives, so
// 'go install go.etcd.io/etcd/server/v3@...' is refused; this main builds the same binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
