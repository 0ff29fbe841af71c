package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports; reading sysconf would need
// cgo.
const clockTicks = 100

// Usage is a process's resource use at one moment.
type Usage struct {
	// CPUSeconds is user plus system time since the process started.
	CPUSeconds float64
	// RSS is the resident memory now; PeakRSS the most it ever had (VmHWM).
	RSS, PeakRSS int64
}

// Reader reads /proc; Root is "/proc" unless a test points it elsewhere.
type Reader struct{ Root string }

// Default reads the real /proc.
var Default = Reader{Root: "/proc"}

// Usage reads the CPU time and memory of process pid.
func (r Reader) Usage(pid int) (Usage, error) {
	dir := filepath.Join(r.Root, strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return Usage{}, fmt.Errorf("reading the CPU time of process %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return Usage{}, fmt.Errorf("process %d: %w", pid, err)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return Usage{}, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	fields := statusFields(status)
	return Usage{CPUSeconds: cpu, RSS: fields["VmRSS"], PeakRSS: fields["VmHWM"]}, nil
}

// parseStatCPU returns utime+stime in seconds from /proc/<pid>/stat. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStatCPU(stat []byte) (float64, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("malformed stat %q", stat)
	}
	// After ')': state(3) ppid(4) ... utime(14) stime(15).
	fields := strings.Fields(string(stat[end+1:]))
	const utime, stime = 14 - 3, 15 - 3
	if len(fields) <= stime {
		return 0, fmt.Errorf("stat has %d fields after the command, want more than %d", len(fields), stime)
	}
	u, err := strconv.ParseUint(fields[utime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime %q: %w", fields[utime], err)
	}
	s, err := strconv.ParseUint(fields[stime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime %q: %w", fields[stime], err)
	}
	return float64(u+s) / clockTicks, nil
}

// statusFields returns the "kB" fields of /proc/<pid>/status in bytes.
func statusFields(status []byte) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		value, unit, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if unit != "kB" {
			continue
		}
		if n, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[name] = n << 10
		}
	}
	return out
}

// Machine describes the computer a run measured.
type Machine struct {
	CPUModel string  `json:"cpuModel"`
	CPUs     int     `json:"cpus"`
	MemoryGB float64 `json:"memoryGiB"`
	Kernel   string  `json:"kernel,omitempty"`
	GoArch   string  `json:"goArch"`
}

// Machine reads the CPU model, CPU count and memory size.
func (r Reader) Machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoArch: runtime.GOARCH}
	if info, err := os.ReadFile(filepath.Join(r.Root, "cpuinfo")); err == nil {
		for line := range strings.SplitSeq(string(info), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				m.CPUModel = strings.TrimSpace(value)
				break
			}
		}
	}
	if mem, err := os.ReadFile(filepath.Join(r.Root, "meminfo")); err == nil {
		m.MemoryGB = float64(statusFields(mem)["MemTotal"]) / (1 << 30)
	}
	if v, err := os.ReadFile(filepath.Join(r.Root, "sys", "kernel", "osrelease")); err == nil {
		m.Kernel = strings.TrimSpace(string(v))
	}
	return m
}

// LoadAverage returns the 1, 5 and 15 minute load averages.
func (r Reader) LoadAverage() ([3]float64, error) {
	var out [3]float64
	data, err := os.ReadFile(filepath.Join(r.Root, "loadavg"))
	if err != nil {
		return out, fmt.Errorf("reading the load average: %w", err)
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return out, fmt.Errorf("malformed loadavg %q", data)
	}
	for i := range out {
		if out[i], err = strconv.ParseFloat(fields[i], 64); err != nil {
			return out, fmt.Errorf("loadavg field %d: %w", i+1, err)
		}
	}
	return out, nil
}

// CPUByProgram sums the CPU seconds of the running processes per group;
// classify names a process's group from its command line (argv), or ""
// to leave it out. Processes that ended are not counted, so take the
// difference of two calls over a phase in which the programs ran
// throughout.
func (r Reader) CPUByProgram(classify func(pid int, argv []string) string) (map[string]float64, error) {
	entries, err := os.ReadDir(r.Root)
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	out := map[string]float64{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		dir := filepath.Join(r.Root, e.Name())
		cmdline, err := os.ReadFile(filepath.Join(dir, "cmdline"))
		if err != nil {
			continue // ended meanwhile
		}
		group := classify(pid, strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"))
		if group == "" {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		cpu, err := parseStatCPU(stat)
		if err != nil {
			return nil, fmt.Errorf("process %d: %w", pid, err)
		}
		out[group] += cpu
	}
	return out, nil
}
