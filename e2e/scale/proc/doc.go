// Package proc reads what Linux knows about a process and the machine from
// /proc: CPU seconds, resident and peak resident memory, load average, CPU
// model and memory size. The scale harness samples the operator with it.
package proc
