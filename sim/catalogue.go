package sim

import (
	"attractorlab/assets"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"attractorlab/models"
	"attractorlab/sim/mnist"
)

// TrainedNames are the bare self-attention models trained in the window
// (Training…): they exist once a training run there has finished an
// epoch, and are named like the shipped ones (TrainedName).
var TrainedNames = []string{"bsa-p2-trained", "bsa-p4-trained"}

// TrainedName is the name of a bare self-attention trained here, by patch
// side.
func TrainedName(p int) string { return bsaName(p) + "-trained" }

// ShippedName is the shipped bare self-attention's name, by patch side.
func ShippedName(p int) string { return bsaName(p) }

// ParseModel reads a model name; "bsa" alone is not a name (it needs a
// patch side: ParseModelPatch).
func ParseModel(name string) (string, error) {
	for _, n := range ModelNames {
		if n == name {
			return n, nil
		}
	}
	if slices.Contains(TrainedNames, name) {
		return name, nil
	}
	return "", fmt.Errorf("model %q is not one of %s (or %s, trained in the window)", name, strings.Join(ModelNames, ", "), strings.Join(TrainedNames, ", "))
}

// ParseModelPatch reads a model name as the command line takes it: "bsa"
// with a patch side (2 or 4) names bsa-p2 or bsa-p4.
// A --patch given with a full name must agree with it (patchGiven).
func ParseModelPatch(name string, patch int, patchGiven bool) (string, error) {
	if name == "bsa" {
		switch patch {
		case 2, 4:
			return fmt.Sprintf("bsa-p%d", patch), nil
		}
		return "", fmt.Errorf("--patch = %d is out of range (allowed 2 or 4)", patch)
	}
	n, err := ParseModel(name)
	if err == nil && patchGiven && n != fmt.Sprintf("bsa-p%d", patch) {
		if strings.HasPrefix(n, "bsa-p") {
			return "", fmt.Errorf("--patch %d contradicts --model %s: give --model bsa --patch %d, or --model %s alone", patch, n, patch, n)
		}
		return "", fmt.Errorf("--patch is the bare self-attention's patch side; --model %s does not take it", n)
	}
	return n, err
}

// CheckModelFlags refuses a model parameter given on the command line
// (given holds the flags set, by name) that none of the models run uses:
// a flag silently ignored would look like a result. The message reads
// "--k is the classical Hopfield network's (hopfield-classic); --model
// bsa-p2 does not use it".
func CheckModelFlags(names []string, given map[string]bool) error {
	// The flags by family, in registry order: a family's models share them.
	var families []string
	members := map[string][]string{}
	flags := map[string][]string{}
	for _, sp := range Registry {
		if len(sp.Flags) == 0 {
			continue
		}
		if _, ok := members[sp.Family]; !ok {
			families = append(families, sp.Family)
		}
		members[sp.Family] = append(members[sp.Family], sp.Name)
		flags[sp.Family] = sp.Flags
	}
	var errs []string
	for _, fam := range families {
		used := false
		for _, n := range names {
			sp, ok := Spec(n)
			used = used || (ok && sp.Family == fam)
		}
		for _, f := range flags[fam] {
			if given[f] && !used {
				errs = append(errs, fmt.Sprintf("--%s is the %s's (%s); --model %s does not use it", f, fam, strings.Join(members[fam], ", "), strings.Join(names, ",")))
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// WeightFiles name, by model, the weights the catalogue loads instead of
// the embedded pretrained ones (absent or "": the embedded file). A block
// or ViT file serves both tasks. Only models with a WeightsFlag take one.
type WeightFiles map[string]string

// Catalogue is the one list of models every command and the window use.
// Networks load on first use; a model's parameters come from the settings
// when it is bound (Model), so each model sees only its own.
type Catalogue struct {
	train   *mnist.Set
	files   WeightFiles
	mu      sync.Mutex
	loaded  map[string]Model         // unbound networks by name
	loading map[string]chan struct{} // closed when the name's load ends
	// fetchErr are the models whose weights the web build could not
	// fetch (the network): not kept as errs, since the next change of
	// the settings tries again (Retry); meanwhile Model reports the error
	// without fetching.
	fetchErr map[string]error
	errs     map[string]error
	warning  map[string][]string
	// deferred tells whether a model's shipped weights would have to be
	// fetched (the web build): LoadAll and Available leave those for later.
	deferred func(name string) bool
}

// NewCatalogue prepares the models over the stored training subset train
// (the Hopfield networks' memories) with the given weight files.
func NewCatalogue(train *mnist.Set, files WeightFiles) *Catalogue {
	return &Catalogue{train: train, files: files, loaded: map[string]Model{}, loading: map[string]chan struct{}{}, fetchErr: map[string]error{}, errs: map[string]error{}, warning: map[string][]string{}, deferred: shippedDeferred}
}

// load returns the unbound network name, loading it once. The lock is
// not held while a network loads: in the web build that is a fetch over
// the network, and the window (its menus ask Info and Available) must
// not wait for it. Callers of one name meanwhile wait for that load.
func (c *Catalogue) load(name string) (Model, error) {
	c.mu.Lock()
	for {
		if m, ok := c.loaded[name]; ok {
			c.mu.Unlock()
			return m, nil
		}
		if err, ok := c.errs[name]; ok {
			c.mu.Unlock()
			return nil, err
		}
		if err, ok := c.fetchErr[name]; ok {
			c.mu.Unlock()
			return nil, err
		}
		ch, busy := c.loading[name]
		if !busy {
			break
		}
		c.mu.Unlock()
		<-ch
		c.mu.Lock()
	}
	sp, ok := Spec(name)
	if ok && sp.load == nil {
		c.mu.Unlock()
		// A model trained in the window: only SetTrained puts it in
		// loaded; not an error kept in errs, since a training run may
		// add it later.
		return nil, fmt.Errorf("model %s has not been trained in this session: Training… (Ctrl+I) trains it", name)
	}
	ch := make(chan struct{})
	c.loading[name] = ch
	file := c.files[name]
	c.mu.Unlock()
	var m Model
	var warn []string
	var err error
	if !ok {
		_, err = ParseModel(name)
	} else {
		func() {
			// A load that panics is an error, and its waiters are let go.
			defer func() {
				if r := recover(); r != nil {
					m, err = nil, fmt.Errorf("model %s could not be loaded: %v", name, r)
				}
			}()
			m, warn, err = sp.load(c, file)
		}()
	}
	// Weights the page still has not got after the load: the fetch
	// failed (a bad file the page did get fails for good).
	fetchFailed := err != nil && ok && file == "" && c.deferred(name)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.loading, name)
	close(ch)
	c.warning[name] = warn
	if fetchFailed {
		err = fmt.Errorf("the weights of model %s could not be fetched (%w): changing the scenario tries again", name, err)
		c.fetchErr[name] = err
		return nil, err
	}
	if err != nil {
		c.errs[name] = err
		return nil, err
	}
	c.loaded[name] = m
	return m, nil
}

// Waiting tells whether the model name's weights are still to be fetched
// (the web build, before the model first runs): it can be chosen, and
// Model would wait for the fetch. A fetch that failed is not waiting: the
// model then reports its error.
func (c *Catalogue) Waiting(name string) bool {
	c.mu.Lock()
	_, fetchFailed := c.fetchErr[name]
	c.mu.Unlock()
	_, ok := c.deferredInfo(name)
	return ok && !fetchFailed
}

// Retry forgets the failed fetches (fetchErr): the models are waiting
// again, and their weights are fetched when they next run.
func (c *Catalogue) Retry() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.fetchErr)
}

// Fetch loads the model name (fetching its weights in the web build) and
// returns what went wrong.
func (c *Catalogue) Fetch(name string) error {
	_, err := c.load(name)
	return err
}

// Usable is nil when the model name can run here with the settings s: a
// model whose weights are still to be fetched is usable on its
// description (they are fetched when it runs; a failed fetch is reported
// then).
func (c *Catalogue) Usable(name string, s Settings) error {
	if _, ok := c.deferredInfo(name); ok {
		return nil
	}
	_, err := c.Model(name, s)
	return err
}

// deferredInfo describes a shipped model whose weights the web build has
// not fetched yet, without fetching them: they come when the model is
// first run (Model). A bare self-attention's shape follows from its patch
// side alone; a block's or ViT's from its file's header, which the page
// has (shippedHead).
func (c *Catalogue) deferredInfo(name string) (ModelInfo, bool) {
	c.mu.Lock()
	_, done := c.loaded[name]
	_, failed := c.errs[name]
	_, fetchFailed := c.fetchErr[name]
	_, busy := c.loading[name]
	c.mu.Unlock()
	sp, ok := Spec(name)
	if done || failed || c.files[name] != "" || !ok || sp.describe == nil {
		return ModelInfo{}, false
	}
	// In the web build a model whose weights the page has but that is
	// still being read is described too: the window's menus do not wait
	// for the parse, nor the engine's rebuild.
	if !c.deferred(name) && !(busy && assets.WebWeights) && !fetchFailed {
		return ModelInfo{}, false
	}
	return sp.describe()
}

// Info describes the model name: from its weights, or (a model whose
// weights the web build has not fetched yet) without fetching them.
func (c *Catalogue) Info(name string) (ModelInfo, error) {
	if info, ok := c.deferredInfo(name); ok {
		return info, nil
	}
	m, err := c.load(name)
	if err != nil {
		return ModelInfo{}, err
	}
	return m.Info(), nil
}

// LoadAll loads every model and returns what went wrong: problems are
// warnings (a missing embedded network whose twin serves both tasks, or a
// model that did not load while others did); err means none loaded.
func (c *Catalogue) LoadAll() (problems []string, err error) {
	n := 0
	for _, name := range ModelNames {
		if _, ok := c.deferredInfo(name); ok {
			n++
			continue
		}
		_, lerr := c.load(name)
		problems = append(problems, c.warning[name]...)
		if lerr != nil {
			problems = append(problems, lerr.Error())
			continue
		}
		n++
	}
	if n == 0 {
		return problems, fmt.Errorf("no model could be loaded: %s", strings.Join(problems, "; "))
	}
	return problems, nil
}

// Warnings are the problems met loading name (it loaded nonetheless).
func (c *Catalogue) Warnings(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.warning[name]
}

// Available are the models that load, in menu order, with their info:
// the shipped ones, then those trained in this session.
func (c *Catalogue) Available() []ModelInfo {
	var out []ModelInfo
	for _, name := range ModelNames {
		if info, ok := c.deferredInfo(name); ok {
			out = append(out, info)
			continue
		}
		if m, err := c.load(name); err == nil {
			out = append(out, m.Info())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range TrainedNames {
		if m, ok := c.loaded[name]; ok {
			out = append(out, m.Info())
		}
	}
	return out
}

// SetTrained makes net (a bare self-attention trained in this session)
// the model TrainedName(net.P), replacing an earlier one of that patch
// side; it returns the name. The catalogue keeps net as it is: give it a
// copy that nothing trains further.
func (c *Catalogue) SetTrained(net *models.BSA) string {
	name := TrainedName(net.P)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.loaded[name] = &BSAModel{M: net, Dyn: DefaultDynamics(), name: name, label: bsaLabel(net.P) + " (trained here)"}
	return name
}

// Trained is the network of the model name trained in this session
// (SetTrained), when there is one.
func (c *Catalogue) Trained(name string) (*models.BSA, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(TrainedNames, name) {
		return nil, false
	}
	m, ok := c.loaded[name].(*BSAModel)
	if !ok {
		return nil, false
	}
	return m.M, true
}

// Portable reports whether the model name is one a catalogue of the same
// stored digits elsewhere (the page's workers) builds the same: its
// shipped weights, not a file's nor a network trained in this session.
func (c *Catalogue) Portable(name string) bool {
	return !slices.Contains(TrainedNames, name) && c.files[name] == ""
}

// Model returns the named model bound to the settings' parameters for it
// (its registry row's bind: the bare self-attention's λ, γ and attention;
// the modern network's β; the classical network's K, update rule and
// seed). The transformers have no parameters.
func (c *Catalogue) Model(name string, s Settings) (Model, error) {
	m, err := c.load(name)
	if err != nil {
		return nil, err
	}
	if sp, ok := Spec(name); ok && sp.bind != nil {
		return sp.bind(m, s), nil
	}
	return m, nil
}
