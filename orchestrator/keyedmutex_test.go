package orchestrator

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestKeyedMutexLocksPerKeyAndForgetsFreeKeys(t *testing.T) {
	t.Parallel()
	var k keyedMutex
	unlockA := k.lock("a")

	done := make(chan struct{})
	go func() { k.lock("b")(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("locking b waited for a")
	}

	got := make(chan struct{})
	go func() { k.lock("a")(); close(got) }()
	select {
	case <-got:
		t.Fatal("a was locked twice at once")
	case <-time.After(50 * time.Millisecond):
	}
	unlockA()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter never got a")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	require.Empty(t, k.locks, "free keys are forgotten")
}
