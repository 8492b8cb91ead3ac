package ui

import (
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// infoTip is a small ⓘ icon that explains what is beside it: a click (or
// a tap) opens the explanation under it, a second click or a click
// elsewhere closes it; the pointer over the icon puts the explanation in
// the status line (Hover). Fyne 2.7 has no tooltips, and a pop-up opened
// on hover covered the icon with its overlay: the pointer left the icon
// at once, the pop-up closed, and a click then closed what hover opened —
// nothing was ever seen.
type infoTip struct {
	widget.BaseWidget
	Text  string
	Hover func(text string) // told the explanation while the pointer is over the icon
	icon  *widget.Icon
	popup *widget.PopUp
}

func newInfoTip(text string) *infoTip {
	t := &infoTip{Text: text, icon: widget.NewIcon(theme.InfoIcon())}
	t.ExtendBaseWidget(t)
	return t
}

func (t *infoTip) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(t.icon) }

func (t *infoTip) MinSize() fyne.Size {
	s := theme.IconInlineSize()
	return fyne.NewSize(s, s)
}

// show opens the explanation under the icon, kept inside the window.
func (t *infoTip) show() {
	c := fyne.CurrentApp().Driver().CanvasForObject(t)
	if c == nil {
		return
	}
	if t.popup == nil {
		l := widget.NewLabel(t.Text)
		l.Wrapping = fyne.TextWrapWord
		t.popup = widget.NewPopUp(l, c)
	}
	w := min(float32(360), c.Size().Width-20)
	lines := fyne.MeasureText(t.Text, theme.TextSize(), fyne.TextStyle{}).Width/(w-4*theme.InnerPadding()) + 1.5
	h := lines*(theme.TextSize()+theme.LineSpacing()) + 4*theme.InnerPadding()
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(t).AddXY(0, t.Size().Height+2)
	pos.X = max(min(pos.X, c.Size().Width-w-10), 0)
	if pos.Y+h > c.Size().Height {
		pos.Y = max(pos.Y-h-t.Size().Height-4, 0)
	}
	t.popup.Resize(fyne.NewSize(w, h))
	t.popup.ShowAtPosition(pos)
}

func (t *infoTip) hide() {
	if t.popup != nil {
		t.popup.Hide()
	}
}

// Tapped opens or closes the explanation.
func (t *infoTip) Tapped(*fyne.PointEvent) {
	if t.popup != nil && t.popup.Visible() {
		t.hide()
		return
	}
	t.show()
}

// MouseIn tells Hover the explanation while the pointer is over the icon.
func (t *infoTip) MouseIn(*desktop.MouseEvent) {
	if t.Hover != nil {
		t.Hover("ⓘ " + t.Text + " (click the ⓘ to keep it open)")
	}
}
func (t *infoTip) MouseMoved(*desktop.MouseEvent) {}
func (t *infoTip) MouseOut()                      {}

// The explanations of the window's terse readouts.
const (
	nearestTip = "The stored training digit most like the state now: its index, its label, " +
		"✓ when that label is the input digit's own (✗: another digit's), and r, the correlation " +
		"of the state with it. \"mean digit r\" is the correlation with the average of all digits, " +
		"the global attractor the state falls toward after t*."
	escapeTip = "MSE(t*): the lowest mean error of the cell's digits over the run. " +
		"t*: the step where it is reached (the transient memory). " +
		"escape step: the first step after t* where the mean error is again worse than the input's " +
		"(the memory is lost); grey when that does not happen within the run."
)

// twoLines makes l wrap at word breaks and keeps the height of two lines
// for it (a wrapping label asks its container for one line only), so a
// long status or readout shows whole instead of cut with "…".
func twoLines(l *widget.Label) fyne.CanvasObject {
	l.Wrapping = fyne.TextWrapWord
	l.Truncation = fyne.TextTruncateOff
	h := fyne.MeasureText("Ag", theme.TextSize(), l.TextStyle).Height
	reserve := canvas.NewRectangle(color.Transparent)
	reserve.SetMinSize(fyne.NewSize(0, 2*h+theme.LineSpacing()+2*theme.InnerPadding()))
	return container.NewStack(reserve, l)
}
