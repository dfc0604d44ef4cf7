package cuda

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// launchProfile times every launch of a step (Options.ProfileFile,
// ORC_CUDA_PROFILE): steps run launch by launch as with SyncEachLaunch,
// without graphs, each launch between two events, so a row of the table is
// a kernel's own time on the GPU (its ramp and tail included, none of the
// overlap that graphs and programmatic launch give a step). Ncu serialises
// kernels too, but replays each one and takes seconds a step; this costs a
// synchronisation a launch. Times are summed by schedule and kernel and
// written as a table when the device closes.
type launchProfile struct {
	path       string
	start, end event
	steps      map[string]int // runSchedule calls by schedule name
	rows       map[profileKey]*profileRow
}

type profileKey struct{ schedule, kernel string }

type profileRow struct {
	launches int
	ms       float64
}

// add records one launch of kernel in schedule that took ms.
func (p *launchProfile) add(schedule, kernel string, ms float64) {
	if p.rows == nil {
		p.rows = map[profileKey]*profileRow{}
	}
	k := profileKey{schedule, kernel}
	r := p.rows[k]
	if r == nil {
		r = &profileRow{}
		p.rows[k] = r
	}
	r.launches++
	r.ms += ms
}

// step counts one run of schedule.
func (p *launchProfile) step(schedule string) {
	if p.steps == nil {
		p.steps = map[string]int{}
	}
	p.steps[schedule]++
}

// write prints the table: per schedule its steps and time a step, then its
// kernels by time, each with launches a step, µs a step and a launch, and
// its share of the schedule.
func (p *launchProfile) write(w io.Writer) error {
	names := make([]string, 0, len(p.steps))
	for s := range p.steps {
		names = append(names, s)
	}
	slices.Sort(names)
	for _, s := range names {
		steps := float64(p.steps[s])
		var keys []profileKey
		total := 0.0
		for k, r := range p.rows {
			if k.schedule == s {
				keys = append(keys, k)
				total += r.ms
			}
		}
		slices.SortFunc(keys, func(a, b profileKey) int {
			return cmp.Or(cmp.Compare(p.rows[b].ms, p.rows[a].ms), cmp.Compare(a.kernel, b.kernel))
		})
		if _, err := fmt.Fprintf(w, "# %s: %d steps, %.1f µs a step\n%10s %10s %10s %6s  %s\n", s, p.steps[s], 1e3*total/steps,
			"launches", "µs a step", "µs each", "share", "kernel"); err != nil {
			return err
		}
		for _, k := range keys {
			r := p.rows[k]
			if _, err := fmt.Fprintf(w, "%10.2f %10.1f %10.2f %5.1f%%  %s\n", float64(r.launches)/steps, 1e3*r.ms/steps,
				1e3*r.ms/float64(r.launches), 100*r.ms/total, k.kernel); err != nil {
				return err
			}
		}
	}
	return nil
}

// startProfile makes d's profile where Options.ProfileFile or
// ORC_CUDA_PROFILE names a file; the events come with the GPU.
func (d *Device) startProfile(o Options) error {
	path := o.ProfileFile
	if env := os.Getenv("ORC_CUDA_PROFILE"); path == "" && env != "" {
		path = env
	}
	if path == "" {
		return nil
	}
	p := &launchProfile{path: path}
	var err error
	if p.start, err = d.g.eventCreate(); err != nil {
		return err
	}
	if p.end, err = d.g.eventCreate(); err != nil {
		return err
	}
	d.profile, d.syncEach = p, true
	return nil
}

// timeLaunch launches one between the profile's events and adds its time
// to kernel's in schedule.
func (d *Device) timeLaunch(schedule, kernel string, one *batch) error {
	p := d.profile
	if err := d.g.eventRecord(p.start); err != nil {
		return err
	}
	if err := d.g.launch(one); err != nil {
		return err
	}
	if err := d.g.eventRecord(p.end); err != nil {
		return err
	}
	ms, err := d.g.elapsedMs(p.start, p.end)
	if err != nil {
		return err
	}
	p.add(schedule, kernel, float64(ms))
	return nil
}

// stopProfile writes the table to its file (replacing it: the file is the
// one the user named for it) and frees the events.
func (d *Device) stopProfile() error {
	p := d.profile
	if p == nil {
		return nil
	}
	d.profile = nil
	err := errors.Join(d.g.eventDestroy(p.start), d.g.eventDestroy(p.end))
	f, ferr := os.Create(p.path)
	if ferr != nil {
		return errors.Join(err, fmt.Errorf("cuda: launch profile: %w", ferr))
	}
	return errors.Join(err, p.write(f), f.Close())
}
