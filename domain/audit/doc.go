// Package audit is the trail of what operators did: one Record per operator action (a
// submission; a pause, resume, cancel, retry or rollback of a plan or a tenant; a gate or ring
// decision; a bulk action, with its filter; an unlock), who did it and what came of it.
//
// Invariants:
//   - a Record names its action, its actor and the plan it touched (or, for an unlock of a
//     tenant that never had a task, the tenant alone), and is stored before the action
//     takes effect (write-ahead): an action that took effect always has its record;
//   - its Outcome is set once (Settle): Applied or Refused, with what the action reported
//     (counts, the status after) or why it was refused (an error code); a Record whose
//     executor stopped between the action and its outcome keeps Pending: the action may or
//     may not have taken effect, and the plan or tenant tells which;
//   - every text a Record holds is bounded (MaxText, MaxAttrs): an operator's comment or a
//     filter cannot make a record grow without bound.
package audit
