package store

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNameTreeModel runs random sets and deletes against a nameTree and
// a sorted slice, checking after each step every lookup, the order, a
// seek and that the versions before are unchanged (path copying); trees
// built in one pass (buildNameTree) are checked the same way.
func TestNameTreeModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names int
		steps int
		bulk  int // names built in one pass before the steps
	}{
		{"small", 40, 400, 0},
		{"deep", 3000, 6000, 0},
		{"bulk then edits", 3000, 3000, 2500},
		{"bulk one leaf", 20, 100, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.names)))
			pool := make([]string, tc.names)
			for i := range pool {
				pool[i] = fmt.Sprintf("n%d.l%d.inst.z%d.example.com.", rng.IntN(1000), i, i%3)
			}
			model := map[string]*node{}
			var tree *nameTree
			if tc.bulk > 0 {
				names := slices.Clone(pool[:tc.bulk])
				slices.SortFunc(names, cmpName)
				nodes := make([]*node, len(names))
				for i, n := range names {
					nodes[i] = &node{}
					model[n] = nodes[i]
				}
				tree = buildNameTree(names, nodes)
			} else {
				tree = &nameTree{}
			}
			checkTree(t, tree, model)
			type version struct {
				tree  *nameTree
				model map[string]*node
			}
			var versions []version
			for step := range tc.steps {
				name := pool[rng.IntN(len(pool))]
				if rng.IntN(3) == 0 {
					tree = tree.Delete(name)
					delete(model, name)
				} else {
					n := &node{}
					tree = tree.Set(name, n)
					model[name] = n
				}
				if step%(tc.steps/10) == 0 {
					checkTree(t, tree, model)
					versions = append(versions, version{tree, clone(model)})
				}
			}
			checkTree(t, tree, model)
			for _, v := range versions {
				checkTree(t, v.tree, v.model)
			}
		})
	}
}

func clone(m map[string]*node) map[string]*node {
	out := make(map[string]*node, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func checkTree(t *testing.T, tree *nameTree, model map[string]*node) {
	t.Helper()
	want := make([]string, 0, len(model))
	for k := range model {
		want = append(want, k)
	}
	slices.SortFunc(want, cmpName)
	if tree.Len() != len(want) {
		t.Fatalf("Len %d, want %d", tree.Len(), len(want))
	}
	var got []string
	for it := tree.Iterator(); !it.Done(); {
		k, v, ok := it.Next()
		if !ok || v != model[k] {
			t.Fatalf("iteration: %q → %p, want %p", k, v, model[k])
		}
		got = append(got, k)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order:\n got %q\nwant %q", got, want)
	}
	for _, k := range want {
		if v, ok := tree.Get(k); !ok || v != model[k] {
			t.Fatalf("Get(%q) = %p %v, want %p", k, v, ok, model[k])
		}
		// Seek to a name just before k ("0" sorts before the digits and
		// letters of its first label) lands on k or an earlier name.
		it := tree.Iterator()
		it.Seek("0" + k)
		if n, _, ok := it.Next(); !ok || cmpName(n, k) > 0 {
			t.Fatalf("Seek(%q) gave %q, want at most %q", "0"+k, n, k)
		}
		it = tree.Iterator()
		it.Seek(k)
		if n, _, ok := it.Next(); !ok || n != k {
			t.Fatalf("Seek(%q) gave %q", k, n)
		}
	}
	if _, ok := tree.Get("absent.example.com."); ok {
		t.Fatal("Get of an absent name found it")
	}
	it := tree.Iterator()
	it.Seek("zzzz.zzzz.")
	if !it.Done() {
		t.Fatal("Seek past the last name is not done")
	}
}

// TestNameTreeReplace: Replace gives the same tree as a Set per name,
// leaves the tree it started from unchanged, and refuses a name the
// tree does not hold.
func TestNameTreeReplace(t *testing.T) {
	names := make([]string, 3000)
	nodes := make([]*node, len(names))
	for i := range names {
		names[i], nodes[i] = fmt.Sprintf("n%d.inst.z%d.example.com.", i, i%7), &node{}
	}
	slices.SortFunc(names, cmpName)
	tree := buildNameTree(names, nodes)
	rng := rand.New(rand.NewPCG(2, 3))
	var keys []string
	var vals []*node
	for i, name := range names {
		if rng.IntN(10) == 0 || i < 40 {
			keys, vals = append(keys, name), append(vals, &node{})
		}
	}
	got, ok := tree.Replace(keys, vals)
	if !ok {
		t.Fatal("Replace refused names the tree holds")
	}
	want := tree
	for i, k := range keys {
		want = want.Set(k, vals[i])
	}
	for i, name := range names {
		g, _ := got.Get(name)
		w, _ := want.Get(name)
		o, _ := tree.Get(name)
		if g != w || o != nodes[i] {
			t.Fatalf("%s: Replace gives %p, Set %p; the old tree %p, want %p", name, g, w, o, nodes[i])
		}
	}
	if got.Len() != len(names) {
		t.Errorf("Len %d after Replace, want %d", got.Len(), len(names))
	}
	if _, ok := tree.Replace([]string{names[0], "absent.example.com."}, []*node{{}, {}}); ok {
		t.Error("Replace took a name the tree does not hold")
	}
}
