// Package checkpoint holds the Checkpoint aggregate: what a task has durably completed.
//
// Invariants:
//   - LastCompletedStageIndex is -1 (nothing completed) or the index of the last completed stage,
//     and equals len(CompletedStages)-1: stages are recorded strictly in order, from 0;
//   - ContextData holds one output (JSON, possibly null) per completed stage, by stage name;
//   - the fence epoch never decreases;
//   - Progress, when there is one, belongs to a stage not completed, the one at Next(): a
//     stage's completion (Record) and a retry from the start (Reset) forget it.
package checkpoint
