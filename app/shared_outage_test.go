package app_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/executor-dev/executor/app"
	"github.com/executor-dev/executor/app/apptest"
	"github.com/executor-dev/executor/domain/task"
	"github.com/executor-dev/executor/infra/redisrepo"
	"github.com/executor-dev/executor/infra/redistest"
	"github.com/executor-dev/executor/stagekind"
)

// In the shared topology, a command on a task another executor runs that meets a Redis outage
// the executor has not noticed yet (Redis refuses writes: out of memory) is refused (ErrDegraded), not journaled
// and acknowledged: journaled, it would reach Redis only at the write-back, after the run it
// meant to stop may have completed elsewhere (an acknowledged cancel lost; chaos found it).
// Nothing of the refused commands is written, neither then nor once Redis takes writes again.
func TestSharedCommandMeetingAnOutageIsRefusedNotJournaled(t *testing.T) {
	t.Parallel()
	rs := redistest.Start(t)
	client := rs.Client()
	w := wireRedis(t, client, true)
	store, mon, st := w.store, w.mon, w.stores
	kinds := stagekind.Builtin(stagekind.HTTPOptions{})
	cfg := w.cfg
	cfg.LeaseTTL = time.Minute
	_, orch := apptest.New(t, st, kinds, cfg)
	var here atomic.Bool // the run is elsewhere, as far as the service can tell
	degraded := func() bool { d, _ := mon.Degraded(); return d }
	svc := app.New(app.Deps{
		Creator: store, Plans: store.Plans(), Tasks: store.Tasks(), Checkpoints: store.Checkpoints(),
		Kinds: kinds, Holders: st.Locker, Launcher: orch, PlanControl: orch, TaskControl: elsewhereRunner{TaskControl: orch, here: &here}, Reaper: orch, Watcher: orch, Unlocker: orch,
		Availability: sharedDegraded(degraded),
	})
	ctx := context.Background()
	sub, err := svc.Submit(ctx, sleepPlan("so-1"))
	require.NoError(t, err)
	planID := sub.Plan.Plan.ID()
	require.Eventually(t, func() bool {
		v, err := svc.TenantTask(ctx, "so-1")
		return err == nil && v.Task.Status() == task.Running
	}, 10*time.Second, 10*time.Millisecond)

	commands := []struct {
		name string
		call func() error
	}{
		{"cancel of a task running elsewhere", func() error { _, err := svc.CancelTenant(ctx, "so-1"); return err }},
		{"pause of a task running elsewhere", func() error { _, err := svc.PauseTenant(ctx, "so-1"); return err }},
		{"plan cancel", func() error { _, err := svc.CancelPlan(ctx, planID); return err }},
	}
	admin := rs.Client()
	for _, tc := range commands {
		require.False(t, degraded(), "%s: the executor has not seen the outage yet", tc.name)
		require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "1").Err())
		require.ErrorIs(t, tc.call(), app.ErrDegraded, tc.name)
		require.NoError(t, admin.ConfigSet(ctx, "maxmemory", "0").Err())
		require.Eventually(t, func() bool { return !degraded() }, 15*time.Second, 20*time.Millisecond,
			"%s: the store sees Redis take writes again", tc.name)
	}
	require.Equal(t, 0, store.JournalLen(), "nothing journaled for a write-back")
	fresh := redisrepo.New(client, redisrepo.Options{Logger: slog.New(slog.DiscardHandler)}) // Redis as every executor reads it
	tk, err := fresh.Tasks().Latest(ctx, "so-1")
	require.NoError(t, err)
	require.Equal(t, task.Running, tk.Status(), "no refused command was written")
	require.False(t, tk.PauseRequested(), "no refused command was written")
	p, err := fresh.Plans().Plan(ctx, planID)
	require.NoError(t, err)
	require.False(t, p.Status().Terminal(), "the plan was not cancelled: %s", p.Status())
}
