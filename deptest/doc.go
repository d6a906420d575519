// Package deptest checks the import direction between cnsd's packages.
//
// Data moves feed → zonegen → store → xfr/api, and readers never import
// upstream. The rules live as a table in deptest_test.go; `go test ./deptest`
// parses the imports of every package in the module (all files, whatever
// their build tags, except _test.go files) and fails on a forbidden arrow.
//
// TestCheckTracked tests scripts/check-tracked.sh, which `make lint` runs:
// on temporary repositories, that it fails on a tracked executable binary or
// a file over 1 MiB and passes the rest, and that this repository passes.
//
// TestDocReferences reads every tracked file and fails on a citation of a
// document that is not in the repository: the team's internal design and
// style notes, or a docs/*.md that does not exist.
//
// The package has no code of its own and nothing may import it.
package deptest
