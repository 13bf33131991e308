package api

import "gopkg.in/yaml.v3"

// yamlNodeCost is what each YAML node counts for besides its text: the quotes, separators
// and brackets its JSON form takes at least.
const yamlNodeCost = 4

// yamlWithin reports whether n, every alias expanded where it stands, takes at most limit
// bytes (its scalars' text, yamlNodeCost per node): what the JSON it converts to takes, about.
// It stops as soon as the budget is spent, so a document of aliases of aliases (each level
// doubling it: a billion laughs) costs at most limit steps, never its expanded size.
func yamlWithin(n *yaml.Node, limit int64) bool {
	budget := limit
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		budget -= int64(len(n.Value)) + yamlNodeCost
		if budget < 0 {
			return false
		}
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			return walk(n.Alias)
		}
		for _, c := range n.Content {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	return walk(n)
}
