package schema

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// explain turns one failure of the validator into an *Error naming the
// field and the value. The text comes from the schema: errorMessage next
// to the failing keyword when there is one, else a message made from the
// keyword and its argument.
func (c *compiledSchema) explain(tree any, e *jsonschema.ValidationError) *Error {
	at := instanceLoc(tree, e.InstanceLocation)
	keyword, node := c.keywordAt(e.AbsoluteKeywordLocation)
	value, _ := lookup(tree, at)
	if strings.Contains(e.KeywordLocation, "/propertyNames") && len(at) > 0 {
		value = at[len(at)-1].key
	}
	switch keyword {
	case "required":
		return missingKey(tree, at, node)
	case "additionalProperties":
		return unknownKey(at, value, node)
	}
	got := ", got " + describe(value)
	if node["writeOnly"] == true {
		got = " (value not shown)"
	}
	if keyword == "type" {
		return invalid(pathOf(at), "must be %s%s", typeNames(node["type"]), got)
	}
	if msg, ok := node["errorMessage"].(string); ok {
		return invalid(pathOf(at), "%s%s", msg, got)
	}
	return invalid(pathOf(at), "%s%s", keywordMessage(keyword, node[keyword], e.Message), got)
}

// keywordAt resolves the validator's absolute keyword location in the
// raw schema: the keyword's name and the schema object that holds it.
func (c *compiledSchema) keywordAt(abs string) (string, map[string]any) {
	_, ptr, _ := strings.Cut(abs, "#")
	steps := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	keyword := steps[len(steps)-1]
	v := c.raw
	for _, s := range steps[:len(steps)-1] {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		switch n := v.(type) {
		case map[string]any:
			v = n[s]
		case []any:
			i, _ := strconv.Atoi(s)
			if i < 0 || i >= len(n) {
				return keyword, nil
			}
			v = n[i]
		}
	}
	node, _ := v.(map[string]any)
	return keyword, node
}

// missingKey reports the first key of node's required list that the
// object at at lacks.
func missingKey(tree any, at loc, node map[string]any) *Error {
	v, _ := lookup(tree, at)
	o, _ := v.(*object)
	required, _ := node["required"].([]any)
	for _, r := range required {
		if k, ok := r.(string); ok && o != nil && !o.has(k) {
			return invalid(pathOf(at.key(k)), "required key is missing")
		}
	}
	return invalid(pathOf(at), "required key is missing")
}

// unknownKey reports the first key of the object v that node does not
// define. The strict pass finds these first; this is a fallback.
func unknownKey(at loc, v any, node map[string]any) *Error {
	props, _ := node["properties"].(map[string]any)
	if o, ok := v.(*object); ok {
		for _, k := range o.keys {
			if _, ok := props[k]; !ok {
				return invalid(pathOf(at), "unknown key %q", k)
			}
		}
	}
	return invalid(pathOf(at), "unknown key")
}

// typeNames renders the argument of the type keyword: "a boolean",
// "a string or an array".
func typeNames(t any) string {
	var names []string
	switch t := t.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, n := range t {
			names = append(names, fmt.Sprint(n))
		}
	}
	for i, n := range names {
		switch n {
		case "null":
		case "array", "integer", "object":
			names[i] = "an " + n
		default:
			names[i] = "a " + n
		}
	}
	return strings.Join(names, " or ")
}

// keywordMessage words the failure of keyword with argument arg; fallback
// is the validator's own text for keywords the schema does not use.
func keywordMessage(keyword string, arg any, fallback string) string {
	switch keyword {
	case "minimum":
		return fmt.Sprintf("must be at least %v", arg)
	case "maximum":
		return fmt.Sprintf("must be at most %v", arg)
	case "exclusiveMinimum":
		return fmt.Sprintf("must be greater than %v", arg)
	case "exclusiveMaximum":
		return fmt.Sprintf("must be less than %v", arg)
	case "minItems":
		return fmt.Sprintf("must have at least %v items", arg)
	case "maxItems":
		return fmt.Sprintf("must have at most %v items", arg)
	case "minLength":
		return fmt.Sprintf("must be at least %v characters long", arg)
	case "maxLength":
		return fmt.Sprintf("must be at most %v characters long", arg)
	case "enum":
		return "must be one of " + enumList(arg)
	case "format":
		return fmt.Sprintf("must be a valid %v", arg)
	}
	return fallback
}

// enumList renders the values of an enum keyword.
func enumList(arg any) string {
	vals, _ := arg.([]any)
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = describe(v)
	}
	return strings.Join(s, ", ")
}
