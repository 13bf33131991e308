package redisrepo

import (
	"context"
	"fmt"
	"time"

	"github.com/executor-dev/executor/infra/outage"
)

// touchSentinel marks that this executor's Redis has its data (TTL: a dead executor's
// sentinel goes away).
func (lw *lossWatch) touchSentinel(ctx context.Context) error {
	return lw.s.client.Set(ctx, lw.instance, time.Now().UTC().Format(time.RFC3339), sentinelTTL).Err()
}

// checkData checks that Redis still holds what this executor saw: the generation (a changed
// one makes new claims wait, see claimsAllowed) and this executor's sentinel, refreshed only
// if it is there (SET XX). Either gone means that Redis lost this executor's data (restarted
// empty, flushed, failed over to an empty replica), which it reports as outage.ErrDataLost,
// so that everything is written back.
func (lw *lossWatch) checkData(ctx context.Context) error {
	if _, lost, err := lw.checkGeneration(ctx); err != nil || lost {
		if err == nil {
			err = fmt.Errorf("redisrepo: the generation changed: %w", outage.ErrDataLost)
		}
		return err
	}
	ok, err := lw.s.client.SetXX(ctx, lw.instance, time.Now().UTC().Format(time.RFC3339), sentinelTTL).Result()
	if err != nil {
		return err
	}
	if !ok {
		lw.lostData.Store(true)
		return fmt.Errorf("redisrepo: sentinel %s is gone: %w", lw.instance, outage.ErrDataLost)
	}
	return lw.checkMasters(ctx)
}
