// Package signals carries operators' commands between executors sharing one Redis: one
// pub/sub channel (rediskey.Keys.Signals), on which any executor publishes a short message
// ("cancel <taskId>", "pause <taskId>", "plan <planId>") and every executor, itself included,
// receives it and hands it to the orchestrator.
//
// Invariants:
//   - a signal is a hint, never the command itself: the command is already in Redis (a
//     compare-and-set of the task or plan) when it is sent, and a run also learns of it from
//     the reply to its next write or heartbeat; a lost signal delays a command's effect to
//     the run's next write, it never loses the command;
//   - Send never blocks longer than its context (a Redis that does not answer is an error);
//   - the subscription is re-established by go-redis after a reconnection; Stop ends the
//     reader and waits for it: no goroutine outlives Stop.
package signals
