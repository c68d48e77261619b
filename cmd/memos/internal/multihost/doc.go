// Package multihost tests memos as a deployment: several `memos serve`
// hosts on one PostgreSQL server, each in a Linux network namespace of its
// own, joined by veth pairs on a bridge, with a client host that sends the
// requests. The tests (TestMultiHost) prove what a team relies on when it
// scales out — a write acknowledged by one host is found by a search on
// another, a host killed mid-load loses no acknowledged write, a database
// restart is a clear 503 that passes by itself, tokens mean the same on
// every host, and the audit chain stays one chain — and BenchmarkScaling
// measures throughput with one, two and three hosts.
//
// The harness needs root (it makes namespaces, a bridge and veth pairs, and
// runs PostgreSQL's server binaries as the postgres user). Where it cannot,
// the tests skip and say why; under CI=true they fail instead, so that
// .ci/run cannot lose them. Every address is a private test address
// (10.213.0.0/24) inside the namespaces: the root namespace gets none, and
// no traffic leaves the machine. See docs/deployment.md.
package multihost
