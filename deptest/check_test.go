package deptest

import (
	"fmt"
	"slices"
	"strings"
)

// A rule constrains the imports of the packages in one subtree of the module.
// Paths in rules are module-relative ("store", "api/client"); "" is the root
// and covers every package.
type rule struct {
	pkg string // the subtree the rule covers: pkg and pkg/...

	// If restrict is set, the only module packages pkg may import are those
	// in the subtrees of allow (and its own unit, see unit).
	restrict bool
	allow    []string

	// If stdOnly is set, pkg may import from outside the module only the
	// standard library and the subtrees of external.
	stdOnly  bool
	external []string

	deny []string // module subtrees pkg must not import

	why string // printed with each violation
}

// A violation is one forbidden import.
type violation struct {
	from, imp, why string // module-relative importer, full import path
}

func (v violation) String() string { return fmt.Sprintf("%s -> %s: %s", v.from, v.imp, v.why) }

// check applies rules to imports, a map from module-relative package path to
// the import paths of its files, and returns the violations sorted.
func check(mod string, imports map[string][]string, rules []rule) []violation {
	var out []violation
	for from, imps := range imports {
		for _, imp := range imps {
			for _, r := range rules {
				if !within(from, r.pkg) {
					continue
				}
				if why, bad := r.forbids(mod, from, imp); bad {
					out = append(out, violation{from, imp, why})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b violation) int { return strings.Compare(a.String(), b.String()) })
	return slices.Compact(out)
}

// forbids reports whether r forbids package from importing imp, and why.
func (r rule) forbids(mod, from, imp string) (string, bool) {
	rel, inModule := moduleRel(mod, imp)
	if !inModule {
		if r.stdOnly && !isStd(imp) && !withinAny(imp, r.external) {
			return r.explain("may import from outside the module only the standard library" + listed(r.external)), true
		}
		return "", false
	}
	if unit(rel) == unit(from) {
		return "", false // a package may always use its own subtree
	}
	if withinAny(rel, r.deny) {
		return r.explain("must not import " + strings.Join(r.deny, ", ")), true
	}
	if r.restrict && !withinAny(rel, r.allow) {
		return r.explain("may import from the module only " + orNothing(r.allow)), true
	}
	return "", false
}

// explain appends the rule's reason to what it says.
func (r rule) explain(s string) string {
	if r.why == "" {
		return s
	}
	return s + " (" + r.why + ")"
}

// unit is the part of the module a package belongs to: its first path
// element, or the first two under cmd/ (each command is its own unit).
func unit(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	if parts[0] == "cmd" && len(parts) > 1 {
		return parts[0] + "/" + parts[1]
	}
	return parts[0]
}

// within reports whether p is tree or below it; "" contains everything.
func within(p, tree string) bool {
	return tree == "" || p == tree || strings.HasPrefix(p, tree+"/")
}

func withinAny(p string, trees []string) bool {
	return slices.ContainsFunc(trees, func(t string) bool { return within(p, t) })
}

// moduleRel returns imp relative to the module mod, if it is in it.
func moduleRel(mod, imp string) (string, bool) {
	if imp == mod {
		return "", true
	}
	rel, ok := strings.CutPrefix(imp, mod+"/")
	return rel, ok
}

// isStd reports whether imp is in the standard library: like the go tool, it
// takes a first path element without a dot to mean so ("C" included).
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func listed(paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	return " and " + strings.Join(paths, ", ")
}

func orNothing(paths []string) string {
	if len(paths) == 0 {
		return "nothing"
	}
	return strings.Join(paths, ", ")
}
