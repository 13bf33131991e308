package api

import (
	"context"
	"net/http"
	"time"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/wire"
)

// getTask is GET /v1/tasks/{taskId}: a task with its lease and checkpoint summary; ?wait=30s
// long-polls until the task is at rest (ended, WAITING, PAUSED or INTERRUPTED) or the wait
// passes.
func (h *handlers) getTask(w http.ResponseWriter, r *http.Request) {
	h.readTask(w, r, "taskId", h.svc.Task, h.svc.WaitTask)
}

// readTask answers a read of one task, named by the path parameter param: read now with get,
// or, with ?wait=, long-polled with wait.
func (h *handlers) readTask(w http.ResponseWriter, r *http.Request, param string,
	get func(context.Context, string) (app.TaskView, error),
	wait func(context.Context, string, time.Duration) (app.TaskView, error),
) {
	id, err := pathParam(r, param)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	d, waiting, err := queryDuration(r, "wait")
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	var v app.TaskView
	if waiting {
		v, err = wait(r.Context(), id, d)
	} else {
		v, err = get(r.Context(), id)
	}
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	h.respond(w, r, http.StatusOK, TaskFrom(v, true))
}

// TaskListFrom maps a page of a plan's tasks to its wire form (tasks without lease and
// checkpoint).
func TaskListFrom(page app.TaskPage) wire.TaskList {
	out := wire.TaskList{
		Tasks: make([]wire.Task, len(page.Tasks)), MissingTasks: MissingFrom(page.Missing),
		Total: page.Total, NextCursor: page.NextCursor,
	}
	for i, v := range page.Tasks {
		out.Tasks[i] = TaskFrom(v, false)
	}
	return out
}
