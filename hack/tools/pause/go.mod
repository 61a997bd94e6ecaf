// The pause image's one binary (hack/local-cluster --with node): a pod sandbox's process.
module paddlegen.invalid/hack/tools/pause

go 1.26.0
