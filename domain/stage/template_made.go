package stage

import (
	"errors"
	"fmt"
	"text/template/parse"
)

// MaxMadeBytes bounds the strings the template functions make (printf, print, println, html,
// js, urlquery, json) while one stage's params render for one tenant, written or not: a
// {{range}} whose every step makes a 1 MB string and drops it ({{$_ := printf "%01000000d"
// 0}}) writes nothing, yet costs its steps × 1 MB. The renderer of a submission also bounds
// them over every tenant (NewBudgetedRenderer's maxBytes).
const MaxMadeBytes = 1 << 20

// fnMade is the function the renderer appends after every call of a maker (a function that
// makes a string): it counts the string against MaxMadeBytes and passes it on.
const fnMade = "_executor_made"

// makers are the functions whose results fnMade counts: those that make a new string, as
// long as their arguments or longer. The others (index, slice, len, eq, and, ...) return what
// they are given, or a small value.
var makers = map[string]bool{"printf": true, "print": true, "println": true, "html": true, "js": true, "urlquery": true, "json": true}

// errTemplateCall is the reason a param defining or calling a template is refused.
var errTemplateCall = errors.New("params cannot define or call templates ({{define}}, {{template}}, {{block}}): the work they do could not be bounded")

// madeGuard is fnMade: `{{printf ...}}` runs as `{{printf ... | _executor_made $}}`. root is
// the template's $ (the *execData being rendered); v is passed on unchanged when it fits.
func madeGuard(root any, v any) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	d, ok := root.(*execData)
	if !ok {
		return nil, fmt.Errorf("%s outside of a param's template (%T)", fnMade, root)
	}
	if d.made += len(s); d.made > MaxMadeBytes {
		return nil, &budgetError{msg: fmt.Sprintf("the template functions make more than %d bytes in this stage's params", MaxMadeBytes)}
	}
	if r := d.r; r != nil && r.maxBytes > 0 && r.made.Add(int64(len(s))) > r.maxBytes {
		return nil, &budgetError{msg: fmt.Sprintf("the template functions make more than %d bytes over every tenant's params", r.maxBytes)}
	}
	return v, nil
}

// guardMakers appends fnMade after every call of a maker in every pipeline under n (actions,
// the conditions of if, range and with, and the pipelines in parentheses), and reports a
// template call: once none is left, $ is the *execData everywhere a template runs.
func guardMakers(n parse.Node) error {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return nil
		}
		for _, c := range n.Nodes {
			if err := guardMakers(c); err != nil {
				return err
			}
		}
	case *parse.ActionNode:
		guardPipe(n.Pipe)
	case *parse.IfNode:
		return guardBranch(&n.BranchNode)
	case *parse.RangeNode:
		return guardBranch(&n.BranchNode)
	case *parse.WithNode:
		return guardBranch(&n.BranchNode)
	case *parse.TemplateNode:
		return errTemplateCall
	}
	return nil
}

func guardBranch(b *parse.BranchNode) error {
	guardPipe(b.Pipe)
	if err := guardMakers(b.List); err != nil {
		return err
	}
	return guardMakers(b.ElseList)
}

// guardPipe appends fnMade after every maker of p, and of the pipelines its arguments hold.
func guardPipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	cmds := make([]*parse.CommandNode, 0, len(p.Cmds))
	for _, c := range p.Cmds {
		for _, a := range c.Args {
			if sub, ok := a.(*parse.PipeNode); ok {
				guardPipe(sub)
			}
		}
		cmds = append(cmds, c)
		if id, ok := c.Args[0].(*parse.IdentifierNode); ok && makers[id.Ident] {
			root := &parse.VariableNode{NodeType: parse.NodeVariable, Pos: c.Pos, Ident: []string{"$"}}
			ident := parse.NewIdentifier(fnMade).SetTree(nil).SetPos(c.Pos)
			cmds = append(cmds, &parse.CommandNode{NodeType: parse.NodeCommand, Pos: c.Pos, Args: []parse.Node{ident, root}})
		}
	}
	p.Cmds = cmds
}
