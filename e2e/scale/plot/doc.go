// Package plot draws the scale report's line and scatter plots as PNG with
// gonum.org/v1/plot: a chart of named series on shared axes, with a legend
// when there is more than one.
package plot
