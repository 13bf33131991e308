package stage

import (
	"fmt"
	"net/url"
	"text/template/parse"
)

// URLParamer is implemented by handlers some of whose params are URLs (the http kind's "url").
// The renderer escapes what the templates of those params insert for the part of the URL it
// lands in (see Renderer.Render); the names are top-level keys of the params.
type URLParamer interface {
	URLParams() []string
}

// LateParamer is implemented by handlers some of whose params are rendered during the
// attempt, by the handler (Request.Late), because they read what only the attempt knows:
// .Response, the stage's first response (the http kind's "poll.url"). The names are dotted
// paths in the params; a late param is rendered as a URL param is.
type LateParamer interface {
	LateParams() []string
}

// Option tells the renderer how a handler's params are shaped (OptionsOf).
type Option func(*options)

type options struct {
	urls []string // URL params, by path
	late []string // late params, by path
}

// URLs names the params that are URLs (URLParamer).
func URLs(paths ...string) Option {
	return func(o *options) { o.urls = append(o.urls, paths...) }
}

// Late names the params rendered during the attempt (LateParamer).
func Late(paths ...string) Option {
	return func(o *options) { o.late = append(o.late, paths...) }
}

// OptionsOf returns the options h declares: its URL params and its late params.
func OptionsOf(h Handler) []Option {
	var opts []Option
	if u, ok := h.(URLParamer); ok {
		opts = append(opts, URLs(u.URLParams()...))
	}
	if l, ok := h.(LateParamer); ok {
		opts = append(opts, Late(l.LateParams()...))
	}
	return opts
}

// urlPart is where in a URL a template's output lands, in the order a URL's parts come.
type urlPart int

const (
	urlBase     urlPart = iota // before the path begins: scheme, authority, or a base an action inserts
	urlPath                    // after the first "/" of the path
	urlQuery                   // after "?"
	urlFragment                // after "#"
)

// urlState is the part reached, with the literal text of the base (to tell the "//" of
// "scheme://" from the first slash of the path).
type urlState struct {
	part urlPart
	base string
}

// after returns the state once text was written in state s.
func (s urlState) after(text string) urlState {
	for i := 0; i < len(text) && s.part < urlFragment; i++ {
		c := text[i]
		switch {
		case c == '#':
			s.part = urlFragment
		case c == '?' && s.part < urlQuery:
			s.part = urlQuery
		case c == '/' && s.part == urlBase:
			if n := len(s.base); n > 0 && s.base[n-1] == ':' || n > 1 && s.base[n-2:] == ":/" {
				s.base += "/" // the "//" of "scheme://": the authority follows
				continue
			}
			s.part = urlPath
		case s.part == urlBase:
			s.base += string(c)
		}
	}
	return s
}

func later(a, b urlState) urlState {
	if b.part > a.part {
		return b
	}
	return a
}

// escapeURL appends to every printing action of tree the escaper of the URL part it lands in
// (nothing before the path begins). strict must have run first, so that a value is checked
// before it is escaped; no param calls a template (errTemplateCall), so every action is here.
func escapeURL(tree *parse.Tree) {
	parts := map[*parse.ActionNode]urlPart{}
	urlWalk(tree.Root, urlState{}, parts)
	walkActions(tree.Root, func(a *parse.ActionNode) {
		if len(a.Pipe.Decl) > 0 {
			return
		}
		switch parts[a] {
		case urlPath:
			appendCommand(a, fnURLPath)
		case urlQuery, urlFragment:
			appendCommand(a, fnURLQuery)
		}
	})
}

// urlWalk follows n from state s, recording in parts the furthest part each action is met in,
// and returns the state after n. A branch that may or may not run leaves the furthest state
// either way reaches.
func urlWalk(n parse.Node, s urlState, parts map[*parse.ActionNode]urlPart) urlState {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return s
		}
		for _, c := range n.Nodes {
			s = urlWalk(c, s, parts)
		}
		return s
	case *parse.TextNode:
		return s.after(string(n.Text))
	case *parse.ActionNode:
		if p, ok := parts[n]; !ok || s.part > p {
			parts[n] = s.part
		}
		return s
	case *parse.IfNode:
		return urlBranch(&n.BranchNode, s, false, parts)
	case *parse.WithNode:
		return urlBranch(&n.BranchNode, s, false, parts)
	case *parse.RangeNode:
		return urlBranch(&n.BranchNode, s, true, parts)
	default: // comments, break, continue
		return s
	}
}

// urlBranch walks an if, with or range: its list (again from where the list ends, for a range,
// until nothing moves further) and its else list, each from s.
func urlBranch(b *parse.BranchNode, s urlState, loop bool, parts map[*parse.ActionNode]urlPart) urlState {
	end := urlWalk(b.List, s, parts)
	for loop {
		again := urlWalk(b.List, later(s, end), parts)
		loop = again.part > end.part
		end = later(end, again)
	}
	out := later(s, end)
	if b.ElseList != nil {
		out = later(end, urlWalk(b.ElseList, s, parts)) // one of the two runs
	}
	return out
}

func urlPathEscape(v any) string  { return url.PathEscape(fmt.Sprint(v)) }
func urlQueryEscape(v any) string { return url.QueryEscape(fmt.Sprint(v)) }
