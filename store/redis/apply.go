package redis

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/cnsd/cnsd/store"
	goredis "github.com/redis/go-redis/v9"
)

// Result codes of the apply and fence scripts.
const (
	redisOK       = 0
	redisConflict = 1
	redisFenced   = 2
	redisBadType  = 3
	// redisLeaseOthers: the fence found the lease held by another process.
	redisLeaseOthers = 4
)

// redisApplyScript writes one zone change atomically.
//
// KEYS: serial, epoch, vms, journal, applied, floor
// (redisZoneKeys.scriptKeys).
// ARGV: epoch, prev, next, mode ("1" drop, "2" replace, "0" neither), keep, diff, nset, channel,
// message, change id, then nset pairs of VM UUID and encoded records, then
// the VMs to delete.
//
// The same script sent again — go-redis resends a pipeline whose reply
// timed out, though the server may have run it — returns {0} without
// writing: the zone is at next and its applied key holds this change's id
// (for a drop: the zone is gone). Any other change finds a conflict.
//
// The replay writes the applied key again, the same value, so that a WAIT
// on the connection that sent it waits for a replica to have the change
// (WAIT covers what its own connection wrote, and the first run may have
// been on another).
//
// It returns {2, stored epoch} when a newer epoch wrote the zone,
// {1, stored serial} when the serial is not prev (a missing serial is 0),
// and {0} after writing: the epoch is raised, VMs set and deleted (a
// replace deletes the VMs and journal keys first), the diff appended and the journal trimmed to keep entries, the serial set,
// and message published; a drop deletes every key of the zone instead,
// keeping its final serial (prev) in the floor key.
// It returns {3, key} before writing anything when the VMs or journal key
// holds the wrong type: Redis does not undo a script's writes when a later
// command fails, so everything that could fail is checked first.
// Redis runs a script whole or not at all, and with appendfsync always
// its effects reach the AOF as one MULTI block, so a crash never leaves
// half of one.
var redisApplyScript = goredis.NewScript(`
local stored_epoch = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if stored_epoch > tonumber(ARGV[1]) then
  return {2, tostring(stored_epoch)}
end
local stored = redis.call('GET', KEYS[1]) or '0'
if stored ~= ARGV[2] then
  if ARGV[4] == '1' and stored == '0' then return {0} end
  if stored == ARGV[3] and redis.call('GET', KEYS[5]) == ARGV[10] then
    -- Written again so that this connection's WAIT covers the first run.
    redis.call('SET', KEYS[5], ARGV[10])
    return {0}
  end
  return {1, stored}
end
local function bad_type(key, want)
  local t = redis.call('TYPE', key)['ok']
  return t ~= 'none' and t ~= want
end
if bad_type(KEYS[3], 'hash') then return {3, KEYS[3]} end
if bad_type(KEYS[4], 'list') then return {3, KEYS[4]} end
if ARGV[4] == '1' then
  redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
  if ARGV[2] ~= '0' then redis.call('SET', KEYS[6], ARGV[2]) end
  redis.call('PUBLISH', ARGV[8], ARGV[9])
  return {0}
end
redis.call('SET', KEYS[2], ARGV[1])
if ARGV[4] == '2' then
  redis.call('DEL', KEYS[3], KEYS[4])
end
local nset = tonumber(ARGV[7])
local first, last = 11, 10 + 2 * nset
-- unpack is bounded by Lua's C stack, so large commits go in chunks.
local chunk = 1000
for i = first, last, chunk do
  redis.call('HSET', KEYS[3], unpack(ARGV, i, math.min(i + chunk - 1, last)))
end
for i = last + 1, #ARGV, chunk do
  redis.call('HDEL', KEYS[3], unpack(ARGV, i, math.min(i + chunk - 1, #ARGV)))
end
if ARGV[6] ~= '' then
  redis.call('RPUSH', KEYS[4], ARGV[6])
end
local keep = tonumber(ARGV[5])
if keep > 0 then
  redis.call('LTRIM', KEYS[4], -keep, -1)
else
  redis.call('DEL', KEYS[4])
end
redis.call('SET', KEYS[1], ARGV[3])
redis.call('SET', KEYS[5], ARGV[10])
redis.call('PUBLISH', ARGV[8], ARGV[9])
return {0}
`)

// redisFenceScript checks an epoch against the global counter before any
// zone is written, and raises the counter to it, so a writer whose lease
// was taken over is refused even in zones the new holder has not written
// yet, and Acquire never hands out an epoch already used. It also refuses
// a writer whose lease another process holds, whatever their epochs: a
// Redis that lost its data (no persistence, a replica promoted without
// it) lost the counter too, and the next Acquire may hand out the
// writer's own epoch again. A lease nobody holds is no refusal: the
// writer's Keep takes it back (redisRenewScript).
//
// KEYS: {cnsd}:epoch, {cnsd}:lease. ARGV: epoch, the lease value
// "<id> <epoch>" of this writer. Returns {2, counter} when the counter is
// higher, {4, 0} when another holds the lease, else {0}.
var redisFenceScript = goredis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local e = tonumber(ARGV[1])
if cur > e then
  return {2, tostring(cur)}
end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[2] then
  return {4, 0}
end
if e > cur then
  redis.call('SET', KEYS[1], ARGV[1])
end
return {0}
`)

// Apply writes each zone change with one script; the scripts of all
// zones go in one pipeline. A zone that conflicts or is fenced is left
// alone while the others are written; the errors of all zones are joined.
// Nothing is written, and the error wraps store.ErrNotDurable, while Redis does
// not persist with an append-only file and AcceptNoAOF is off.
//
// When the master has replicas, WAIT 1 follows the scripts on their
// connection; when no replica acknowledges them within ReplicaTimeout
// the error wraps store.ErrNotReplicated: they are written but may not survive
// a failover. Applying the same changes again (same ID) writes what a
// failover lost, or only waits again.
func (r *Backend) Apply(ctx context.Context, epoch uint64, changes []store.ZoneChange) error {
	if err := r.requireDurable(ctx); err != nil {
		return err
	}
	err := r.apply(ctx, epoch, changes)
	if err != nil && !errors.Is(err, store.ErrNotReplicated) {
		r.forgetDurability()
	}
	return err
}

func (r *Backend) apply(ctx context.Context, epoch uint64, changes []store.ZoneChange) error {
	res, err := redisFenceScript.Run(ctx, r.c, []string{redisEpochKey, redisLeaseKey}, epoch, r.leaseValue(epoch)).Int64Slice()
	if err != nil {
		return fmt.Errorf("store: redis check epoch %d: %w", epoch, err)
	}
	switch res[0] {
	case redisFenced:
		return fmt.Errorf("store: epoch %d, lease counter at %d: %w", epoch, res[1], store.ErrFenced)
	case redisLeaseOthers:
		return fmt.Errorf("store: epoch %d: the writer lease is another process's: %w", epoch, store.ErrFenced)
	}
	if err := r.listNewZones(ctx, changes); err != nil {
		return err
	}
	if err := r.listFloors(ctx, changes); err != nil {
		return err
	}
	id := store.NewChangeID()
	if len(changes) > 0 && changes[0].ID != "" {
		id = changes[0].ID
	}
	wait := r.waitsForReplica()
	cmds, acked := r.runApplyScripts(ctx, changes, encodeApplyArgs(epoch, id, changes), wait)
	var errs []error
	for i, c := range changes {
		if err := r.applyResult(ctx, epoch, c, cmds[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		// What was written and not replicated is the caller's to find
		// out by loading the zones again, as after a lost reply.
		return errors.Join(errs...)
	}
	if wait && acked < 1 {
		return r.notReplicated(ctx)
	}
	return nil
}

// listNewZones adds the zones a change creates to the zone set before
// anything is written to them: a crash after it leaves a listed zone
// without keys, which Load skips, never unlisted data.
func (r *Backend) listNewZones(ctx context.Context, changes []store.ZoneChange) error {
	var zones []any
	for _, c := range changes {
		if c.Prev == 0 && !c.Drop {
			zones = append(zones, c.Zone)
		}
	}
	if len(zones) == 0 {
		return nil
	}
	if err := r.c.SAdd(ctx, redisZonesKey, zones...).Err(); err != nil {
		return fmt.Errorf("store: redis list zones %v: %w", zones, err)
	}
	return nil
}

// runApplyScripts sends every zone's script with EVALSHA in one
// pipeline, then resends with EVAL, in a second pipeline, those the
// server did not have cached (after a restart or failover). With wait,
// each pipeline ends with WAIT 1: a pipeline runs on one connection, and
// WAIT covers only what its own connection wrote. acked is the fewest
// replicas either WAIT counted (-1 when a WAIT failed).
func (r *Backend) runApplyScripts(ctx context.Context, changes []store.ZoneChange, args [][]any, wait bool) (cmds []*goredis.Cmd, acked int64) {
	cmds = make([]*goredis.Cmd, len(changes))
	send := func(idx []int, run func(p goredis.Pipeliner, i int) *goredis.Cmd) {
		var w *goredis.Cmd
		// Each command carries its own error, connection errors
		// included; applyResult reports them per zone.
		_, _ = r.c.Pipelined(ctx, func(p goredis.Pipeliner) error {
			for _, i := range idx {
				cmds[i] = run(p, i)
			}
			if wait {
				// Pipeliner lacks the Wait method Client has.
				w = p.Do(ctx, "WAIT", 1, r.opts.ReplicaTimeout.Milliseconds())
			}
			return nil
		})
		if w != nil {
			n, err := w.Int64()
			if err != nil {
				n = -1
			}
			acked = min(acked, n)
		}
	}
	acked = 1
	all := make([]int, len(changes))
	for i := range all {
		all[i] = i
	}
	send(all, func(p goredis.Pipeliner, i int) *goredis.Cmd {
		return redisApplyScript.EvalSha(ctx, p, zoneKeys(changes[i].Zone).scriptKeys(), args[i]...)
	})
	var lost []int
	for i := range changes {
		if goredis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT") {
			lost = append(lost, i)
		}
	}
	if len(lost) > 0 {
		send(lost, func(p goredis.Pipeliner, i int) *goredis.Cmd {
			return redisApplyScript.Eval(ctx, p, zoneKeys(changes[i].Zone).scriptKeys(), args[i]...)
		})
	}
	return cmds, acked
}

// applyResult turns one zone's script result into an error and unlists
// a dropped zone.
func (r *Backend) applyResult(ctx context.Context, epoch uint64, c store.ZoneChange, cmd *goredis.Cmd) error {
	res, err := cmd.Slice()
	if err != nil {
		return fmt.Errorf("store: redis apply zone %s serial %d→%d: %w", c.Zone, c.Prev, c.Next, err)
	}
	code, _ := res[0].(int64)
	switch code {
	case redisOK:
	case redisConflict:
		return fmt.Errorf("store: zone %s at serial %v, change from %d: %w", c.Zone, res[1], c.Prev, store.ErrConflict)
	case redisFenced:
		return fmt.Errorf("store: zone %s written by epoch %v, this is %d: %w", c.Zone, res[1], epoch, store.ErrFenced)
	case redisBadType:
		return fmt.Errorf("store: redis apply zone %s: key %v holds the wrong type", c.Zone, res[1])
	default:
		return fmt.Errorf("store: redis apply zone %s: unexpected script result %v", c.Zone, res)
	}
	if c.Drop {
		// Unlisted only after its keys are gone, for the same reason
		// new zones are listed first.
		if err := r.c.SRem(ctx, redisZonesKey, c.Zone).Err(); err != nil {
			return fmt.Errorf("store: redis unlist dropped zone %s: %w", c.Zone, err)
		}
	}
	return nil
}

// encodeApplyArgs encodes the changes' values in parallel: a bootstrap
// encodes every record of several zones.
func encodeApplyArgs(epoch uint64, id string, changes []store.ZoneChange) [][]any {
	args := make([][]any, len(changes))
	if len(changes) == 1 {
		args[0] = applyArgs(epoch, id, changes[0])
		return args
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, c := range changes {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			args[i] = applyArgs(epoch, id, c)
			<-sem
		}()
	}
	wg.Wait()
	return args
}

// applyArgs lays out ARGV for redisApplyScript.
func applyArgs(epoch uint64, id string, c store.ZoneChange) []any {
	drop, diff := "0", []byte{}
	if c.Drop {
		drop = "1"
	} else {
		if c.Replace {
			drop = "2"
		}
		// A diff the journal is not to keep is deleted by the script
		// right after it is pushed: not encoded nor sent.
		if c.KeepJournal > 0 {
			diff = packJournal(c.EncodedDiff())
		}
	}
	next := c.Next
	args := make([]any, 0, 10+2*len(c.SetVMs)+len(c.DelVMs))
	args = append(args,
		strconv.FormatUint(epoch, 10),
		strconv.FormatUint(uint64(c.Prev), 10),
		strconv.FormatUint(uint64(next), 10),
		drop,
		strconv.Itoa(c.KeepJournal),
		diff,
		strconv.Itoa(len(c.SetVMs)),
		redisCommitsCh,
		c.Zone+" "+strconv.FormatUint(uint64(next), 10),
		id,
	)
	vms, recs := c.SetSorted()
	for i, vm := range vms {
		args = append(args, vm, store.EncodeVMRecords(c.Zone, recs[i]))
	}
	for _, vm := range c.DelVMs {
		args = append(args, vm)
	}
	return args
}
