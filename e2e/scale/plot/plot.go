package plot

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"strconv"
)

// Style is how a series is drawn.
type Style int

// Styles of a series.
const (
	// Line joins the points in their order.
	Line Style = iota
	// Dots draws each point as a small square.
	Dots
)

// XY is one point.
type XY struct{ X, Y float64 }

// Series is one named set of points.
type Series struct {
	Name   string
	Points []XY
	Style  Style
}

// Chart is a plot with one or more series on shared axes.
type Chart struct {
	Title, XLabel, YLabel string
	Series                []Series
	// Width and Height in pixels; default 960×540.
	Width, Height int
}

// palette colours the series in order.
var palette = []color.RGBA{
	{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
}

var (
	black = color.RGBA{A: 0xff}
	grey  = color.RGBA{R: 0xdd, G: 0xdd, B: 0xdd, A: 0xff}
	white = color.RGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
)

const (
	textScale = 2
	margin    = 16
)

// ErrNoPoints means the chart has nothing to draw.
var ErrNoPoints = errors.New("plot: no points to draw")

// frame maps data coordinates to pixels.
type frame struct {
	width, height            int
	left, top, right, bottom int
	x, y                     axis
}

func (f frame) px(p XY) (int, int) {
	x := f.left + int(math.Round((p.X-f.x.min)/(f.x.max-f.x.min)*float64(f.right-f.left)))
	y := f.bottom - int(math.Round((p.Y-f.y.min)/(f.y.max-f.y.min)*float64(f.bottom-f.top)))
	return x, y
}

// Render draws the chart.
func (c Chart) Render() (*image.RGBA, error) {
	f, err := c.layout()
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, f.width, f.height))
	draw.Draw(img, img.Bounds(), &image.Uniform{C: white}, image.Point{}, draw.Src)
	lineH := lineHeight()
	drawText(img, margin, margin, c.Title, black, textScale)
	drawText(img, margin, margin+lineH+margin, c.YLabel, black, textScale)
	c.drawAxes(img, f)
	for i, s := range c.Series {
		drawSeries(img, f, s, palette[i%len(palette)])
	}
	c.drawLegend(img, f)
	return img, nil
}

// layout places the frame: title and Y label above it, X labels below,
// Y labels left of it.
func (c Chart) layout() (frame, error) {
	f := frame{width: c.Width, height: c.Height}
	if f.width == 0 {
		f.width = 960
	}
	if f.height == 0 {
		f.height = 540
	}
	xs, ys := bounds(c.Series)
	if xs == nil {
		return f, ErrNoPoints
	}
	f.x, f.y = niceAxis(xs[0], xs[1]), niceAxis(math.Min(0, ys[0]), ys[1])
	lineH := lineHeight()
	f.top = margin + 2*lineH + 2*margin
	f.bottom = f.height - margin - 2*lineH - margin
	f.left = margin + textWidth(f.y.widestLabel(), textScale) + margin/2
	f.right = f.width - 2*margin
	return f, nil
}

func (c Chart) drawAxes(img *image.RGBA, f frame) {
	lineH := lineHeight()
	for _, v := range f.y.ticks() {
		_, y := f.px(XY{X: f.x.min, Y: v})
		hline(img, f.left, f.right, y, grey)
		label := f.y.label(v)
		drawText(img, f.left-margin/2-textWidth(label, textScale), y-lineH/2, label, black, textScale)
	}
	for _, v := range f.x.ticks() {
		x, _ := f.px(XY{X: v, Y: f.y.min})
		vline(img, x, f.top, f.bottom, grey)
		label := f.x.label(v)
		drawText(img, x-textWidth(label, textScale)/2, f.bottom+margin/2, label, black, textScale)
	}
	hline(img, f.left, f.right, f.bottom, black)
	vline(img, f.left, f.top, f.bottom, black)
	drawText(img, (f.left+f.right-textWidth(c.XLabel, textScale))/2, f.bottom+margin+lineH, c.XLabel, black, textScale)
}

// drawLegend names the series top left, where growing curves rarely are.
func (c Chart) drawLegend(img *image.RGBA, f frame) {
	if len(c.Series) < 2 {
		return
	}
	lineH := lineHeight()
	y := f.top + margin/2
	for i, s := range c.Series {
		x := f.left + margin
		fill(img, image.Rect(x, y, x+lineH, y+lineH), palette[i%len(palette)])
		drawText(img, x+lineH+margin/2, y, s.Name, black, textScale)
		y += lineH + margin/2
	}
}

func drawSeries(img *image.RGBA, f frame, s Series, col color.RGBA) {
	for i, p := range s.Points {
		x, y := f.px(p)
		switch s.Style {
		case Dots:
			fill(img, image.Rect(x-2, y-2, x+3, y+3), col)
		default:
			if i > 0 {
				x0, y0 := f.px(s.Points[i-1])
				thickLine(img, x0, y0, x, y, col)
			}
		}
	}
}

// bounds returns [min, max] of X and of Y over all points, nil for none.
func bounds(series []Series) (xs, ys []float64) {
	for _, s := range series {
		for _, p := range s.Points {
			if math.IsNaN(p.X) || math.IsNaN(p.Y) || math.IsInf(p.X, 0) || math.IsInf(p.Y, 0) {
				continue
			}
			if xs == nil {
				xs, ys = []float64{p.X, p.X}, []float64{p.Y, p.Y}
				continue
			}
			xs[0], xs[1] = math.Min(xs[0], p.X), math.Max(xs[1], p.X)
			ys[0], ys[1] = math.Min(ys[0], p.Y), math.Max(ys[1], p.Y)
		}
	}
	return xs, ys
}

// axis is a value range with round tick steps.
type axis struct{ min, max, step float64 }

// niceAxis widens [lo, hi] to multiples of a round step (1, 2 or 5 × 10^k)
// that gives about five ticks.
func niceAxis(lo, hi float64) axis {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	return axis{min: math.Floor(lo/step) * step, max: math.Ceil(hi/step) * step, step: step}
}

func (a axis) ticks() []float64 {
	var out []float64
	for i := 0; ; i++ {
		v := a.min + float64(i)*a.step
		if v > a.max+a.step/1000 {
			return out
		}
		out = append(out, v)
	}
}

func (a axis) label(v float64) string {
	decimals := 0
	if a.step < 1 {
		decimals = int(math.Ceil(-math.Log10(a.step)))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

func (a axis) widestLabel() string {
	widest := ""
	for _, v := range a.ticks() {
		if l := a.label(v); len(l) > len(widest) {
			widest = l
		}
	}
	return widest
}

func hline(img *image.RGBA, x0, x1, y int, c color.Color) {
	for x := x0; x <= x1; x++ {
		img.Set(x, y, c)
	}
}

func vline(img *image.RGBA, x, y0, y1 int, c color.Color) {
	for y := y0; y <= y1; y++ {
		img.Set(x, y, c)
	}
}

func fill(img *image.RGBA, r image.Rectangle, c color.Color) {
	draw.Draw(img, r, &image.Uniform{C: c}, image.Point{}, draw.Src)
}

// thickLine draws a two-pixel line from (x0, y0) to (x1, y1) (Bresenham).
func thickLine(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		img.Set(x0, y0, c)
		img.Set(x0+1, y0, c)
		img.Set(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v < 0:
		return -1
	case v > 0:
		return 1
	}
	return 0
}

// EncodePNG renders the chart as PNG bytes.
func (c Chart) EncodePNG() ([]byte, error) {
	img, err := c.Render()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encoding the plot %q: %w", c.Title, err)
	}
	return buf.Bytes(), nil
}

// WriteFile writes the chart as a PNG file.
func (c Chart) WriteFile(path string) error {
	data, err := c.EncodePNG()
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing the plot %s: %w", path, err)
	}
	return nil
}
