package proc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CPUTimes are the machine's CPU seconds by state since boot, all CPUs
// summed, from the cpu line of /proc/stat.
type CPUTimes struct {
	// Busy is user, nice, system, irq and softirq time (guest time is
	// inside user).
	Busy float64
	Idle float64
	// IOWait is idle time while a task waited for disk I/O: etcd's fsyncs.
	IOWait float64
	// Steal is time the hypervisor gave another guest: a slower machine
	// that the programs' own CPU seconds cannot show.
	Steal float64
}

// CPUShares is how a span of the machine's time split, as fractions of 1.
type CPUShares struct {
	Busy   float64 `json:"busy"`
	Idle   float64 `json:"idle"`
	IOWait float64 `json:"iowait"`
	Steal  float64 `json:"steal"`
}

// MachineCPU reads the machine's CPU times.
func (r Reader) MachineCPU() (CPUTimes, error) {
	data, err := os.ReadFile(filepath.Join(r.Root, "stat"))
	if err != nil {
		return CPUTimes{}, fmt.Errorf("reading the machine's CPU times: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	fields := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]
	if len(fields) < 9 || fields[0] != "cpu" {
		return CPUTimes{}, fmt.Errorf("malformed /proc/stat cpu line %q", line)
	}
	var ticks [8]float64
	for i := range ticks {
		v, err := strconv.ParseUint(fields[i+1], 10, 64)
		if err != nil {
			return CPUTimes{}, fmt.Errorf("/proc/stat cpu field %d: %w", i+1, err)
		}
		ticks[i] = float64(v) / clockTicks
	}
	user, nice, system, idle, iowait, irq, softirq, steal := ticks[0], ticks[1], ticks[2], ticks[3], ticks[4], ticks[5], ticks[6], ticks[7]
	return CPUTimes{Busy: user + nice + system + irq + softirq, Idle: idle, IOWait: iowait, Steal: steal}, nil
}

// SharesUntil is how the machine's time from t to later split.
func (t CPUTimes) SharesUntil(later CPUTimes) CPUShares {
	d := CPUTimes{Busy: later.Busy - t.Busy, Idle: later.Idle - t.Idle, IOWait: later.IOWait - t.IOWait, Steal: later.Steal - t.Steal}
	total := d.Busy + d.Idle + d.IOWait + d.Steal
	if total <= 0 {
		return CPUShares{}
	}
	return CPUShares{Busy: d.Busy / total, Idle: d.Idle / total, IOWait: d.IOWait / total, Steal: d.Steal / total}
}
