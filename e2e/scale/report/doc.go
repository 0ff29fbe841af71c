// Package report holds the results of a scale run: the JSON document, the
// short table printed at the end, and the targets of issue 11 judged
// against the measured figures.
package report
