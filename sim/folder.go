package sim

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"attractorlab/models/infile"
	"attractorlab/sim/mnist"
)

// A folder of pictures as a data set (docs/data.md, "A folder of your own
// pictures"): DIR/CLASS/PICTURE, the class from the sub-folder's name, each
// picture prepared exactly as a person's own digit is (ReadDigitPicture:
// lightness, ink from the border's colour, the ink's box into 20×20, the
// centre of mass at the centre), split by a seeded rule and cached as IDX
// files beside a manifest, like MNIST's cache.

// The bounds of a folder data set.
const (
	MaxFolderFiles   = 70000 // files in the class folders, pictures or not
	MaxFolderClasses = 100   // class folders (labels 0 … 99)
	MaxClassName     = 64    // bytes of a class folder's name
	// FolderTestEvery: of each class's pictures, one in FolderTestEvery
	// (rounded down) are test pictures.
	FolderTestEvery = 5
	// FolderSeed seeds each class's order (with the class's number).
	FolderSeed = 0xf01de7
)

// maxFolderFiles is MaxFolderFiles (tests lower it).
var maxFolderFiles = MaxFolderFiles

// folderManifestVersion is the manifest's version (folder.json).
const folderManifestVersion = 1

// FolderManifest is folder.json in a folder data set's cache: what was
// converted, from where, what was skipped, and the md5 of each IDX file.
type FolderManifest struct {
	Version int      `json:"version"`
	Name    string   `json:"name"`
	Source  string   `json:"source"` // the folder, absolute
	Classes []string `json:"classes"`
	Train   int      `json:"train"`
	Test    int      `json:"test"`
	// Files are the four IDX files (train images, labels, test images,
	// labels) with their md5s.
	Files   []FolderFile `json:"files"`
	Skipped []Skipped    `json:"skipped,omitempty"`
}

// FolderFile is an IDX file of the cache and its md5.
type FolderFile struct {
	Name string `json:"name"`
	MD5  string `json:"md5"`
}

// Skipped is a file or folder a conversion left out, and why.
type Skipped struct {
	Path string `json:"path"` // relative to the folder
	Why  string `json:"why"`
}

var folderFileNames = []string{"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}

var folderNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// FolderName is the data set name a folder gets: its base name in lower
// case, each character other than a–z, 0–9, '.', '_' and '-' made '-'.
func FolderName(dir string) string {
	base := strings.ToLower(filepath.Base(filepath.Clean(dir)))
	var b strings.Builder
	for _, r := range base {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-._")
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		name = "folder"
	}
	return name
}

// FolderNameFor is the name folder dir is cached under when no name is
// given: its own conversion's when it has one, else FolderName(dir), or
// FolderName(dir)-2, -3, … where another folder has that name.
func FolderNameFor(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	base := FolderName(dir)
	for k := 1; ; k++ {
		name := base
		if k > 1 {
			suffix := fmt.Sprintf("-%d", k)
			name = base[:min(len(base), 64-len(suffix))] + suffix
		}
		cache, err := FolderCache(name)
		if err != nil {
			return name
		}
		m, err := readFolderManifest(cache)
		if err != nil || m.Source == abs {
			return name
		}
	}
}

// CheckFolderName refuses a folder data set name that is not one a
// conversion could have made.
func CheckFolderName(name string) error {
	if !folderNameRE.MatchString(name) {
		return fmt.Errorf("data set %q: a folder's name is 1 to 64 of a–z, 0–9, '.', '_', '-', starting with a letter or digit", mnist.FolderPrefix+name)
	}
	return nil
}

// FolderCache is where folder data set name is cached.
func FolderCache(name string) (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "attractorlab", "folders", name), nil
}

// Folders are the folder data sets in the cache, by name ("folder:NAME"),
// sorted.
func Folders() []string {
	root, err := FolderCache("")
	if err != nil {
		return nil
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && CheckFolderName(e.Name()) == nil {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "folder.json")); err == nil {
				out = append(out, mnist.FolderPrefix+e.Name())
			}
		}
	}
	return out
}

// ConvertFolder reads the pictures of dir (DIR/CLASS/PICTURE) into a
// training and a test set. Classes are the sub-folders, in name order;
// files directly in dir, folders inside a class folder, symbolic links
// (never followed: no loops), hidden files and files that are not PNG
// or JPEG pictures are skipped, each by name with the reason, as are
// class folders left with no pictures. Each class's pictures, in name
// order, are put in a seeded order (FolderSeed and the class's number);
// the first ⌊n/FolderTestEvery⌋ are test pictures, the rest training
// ones. progress, when not nil, is told of the files read.
func ConvertFolder(ctx context.Context, dir string, progress func(done, total int)) (train, test *mnist.Set, classes []string, skipped []Skipped, err error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--dataset %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, nil, nil, nil, fmt.Errorf("--dataset %s: not a folder (want a folder with one sub-folder of pictures per class)", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("--dataset %s: %w", dir, err)
	}
	type class struct {
		name  string
		files []string
	}
	var cs []class
	total := 0
	for _, e := range ents {
		switch {
		case strings.HasPrefix(e.Name(), "."):
			skipped = append(skipped, Skipped{e.Name(), "hidden"})
		case e.Type()&fs.ModeSymlink != 0:
			skipped = append(skipped, Skipped{e.Name(), "a symbolic link: not followed"})
		case !e.IsDir():
			skipped = append(skipped, Skipped{e.Name(), "not in a class folder (DIR/CLASS/PICTURE)"})
		case len(e.Name()) > MaxClassName || !utf8.ValidString(e.Name()):
			skipped = append(skipped, Skipped{e.Name(), fmt.Sprintf("a class name is at most %d bytes of UTF-8", MaxClassName)})
		default:
			sub, err := os.ReadDir(filepath.Join(dir, e.Name()))
			if err != nil {
				skipped = append(skipped, Skipped{e.Name(), "cannot be read: " + err.Error()})
				continue
			}
			c := class{name: e.Name()}
			for _, f := range sub {
				rel := filepath.Join(e.Name(), f.Name())
				switch {
				case strings.HasPrefix(f.Name(), "."):
					skipped = append(skipped, Skipped{rel, "hidden"})
				case f.Type()&fs.ModeSymlink != 0:
					skipped = append(skipped, Skipped{rel, "a symbolic link: not followed"})
				case f.IsDir():
					skipped = append(skipped, Skipped{rel, "a folder inside a class folder"})
				case !f.Type().IsRegular():
					skipped = append(skipped, Skipped{rel, "not a regular file"})
				default:
					c.files = append(c.files, f.Name())
				}
			}
			total += len(c.files)
			if total > maxFolderFiles {
				return nil, nil, nil, nil, fmt.Errorf("--dataset %s: more than %d files in its class folders (allowed up to %d)", dir, maxFolderFiles, maxFolderFiles)
			}
			cs = append(cs, c)
		}
	}
	if len(cs) > MaxFolderClasses {
		return nil, nil, nil, nil, fmt.Errorf("--dataset %s: %d class folders (allowed 1 … %d)", dir, len(cs), MaxFolderClasses)
	}
	train, test = &mnist.Set{}, &mnist.Set{}
	done := 0
	for _, c := range cs {
		var pics [][]uint8
		for _, f := range c.files {
			if err := ctx.Err(); err != nil {
				return nil, nil, nil, nil, err
			}
			rel := filepath.Join(c.name, f)
			d, err := ReadDigitPictureFile(filepath.Join(dir, rel))
			done++
			if progress != nil {
				progress(done, total)
			}
			if err != nil {
				// The reader's message names the whole path: the
				// summary names the file within the folder.
				why := strings.TrimPrefix(err.Error(), filepath.Join(dir, rel)+": ")
				skipped = append(skipped, Skipped{rel, why})
				continue
			}
			pics = append(pics, d)
		}
		if len(pics) == 0 {
			skipped = append(skipped, Skipped{c.name, "a class folder with no pictures"})
			continue
		}
		label := uint8(len(classes))
		classes = append(classes, c.name)
		order := rand.New(rand.NewPCG(FolderSeed, uint64(label))).Perm(len(pics))
		nt := len(pics) / FolderTestEvery
		for k, p := range order {
			s := train
			if k < nt {
				s = test
			}
			s.Images = append(s.Images, pics[p]...)
			s.Labels = append(s.Labels, label)
			s.Index = append(s.Index, s.Len()-1)
		}
	}
	slices.SortFunc(skipped, func(a, b Skipped) int { return strings.Compare(a.Path, b.Path) })
	if len(classes) == 0 {
		return nil, nil, nil, skipped, fmt.Errorf("--dataset %s: no pictures (want DIR/CLASS/PICTURE, PNG or JPEG)%s", dir, skippedSummary(skipped, 5))
	}
	if test.Len() == 0 {
		return nil, nil, nil, skipped, fmt.Errorf("--dataset %s: no class has %d pictures, so there are no test pictures (one in %d of a class's pictures is a test picture)", dir, FolderTestEvery, FolderTestEvery)
	}
	return train, test, classes, skipped, nil
}

// skippedSummary lists up to n skipped files for a message.
func skippedSummary(s []Skipped, n int) string {
	if len(s) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("; skipped:")
	for _, k := range s[:min(n, len(s))] {
		fmt.Fprintf(&b, "\n  %s: %s", k.Path, k.Why)
	}
	if len(s) > n {
		fmt.Fprintf(&b, "\n  … and %d more", len(s)-n)
	}
	return b.String()
}

// CacheFolder converts dir (ConvertFolder) and caches it as the data set
// name: the IDX files and folder.json are written to a temporary folder
// beside the cache and moved in whole, replacing an earlier conversion
// of the same name only when its source was this folder (another
// folder's cache of that name is refused: choose another name). A failed
// or cancelled conversion leaves the cache as it was.
func CacheFolder(ctx context.Context, dir, name string, progress func(done, total int)) (*FolderManifest, error) {
	if err := CheckFolderName(name); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	cache, err := FolderCache(name)
	if err != nil {
		return nil, err
	}
	if old, err := readFolderManifest(cache); err == nil && old.Source != abs {
		return nil, fmt.Errorf("data set %s%s is already the folder %s: give this one another name (--name)", mnist.FolderPrefix, name, old.Source)
	}
	train, test, classes, skipped, err := ConvertFolder(ctx, abs, progress)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		return nil, err
	}
	part, err := os.MkdirTemp(filepath.Dir(cache), "."+name+".part*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(part)
	m := &FolderManifest{Version: folderManifestVersion, Name: name, Source: abs, Classes: classes,
		Train: train.Len(), Test: test.Len(), Skipped: skipped}
	for k, x := range []*mnist.IDX{
		{Type: 0x08, Dims: []int{train.Len(), 28, 28}, Data: train.Images},
		{Type: 0x08, Dims: []int{train.Len()}, Data: train.Labels},
		{Type: 0x08, Dims: []int{test.Len(), 28, 28}, Data: test.Images},
		{Type: 0x08, Dims: []int{test.Len()}, Data: test.Labels},
	} {
		h := md5.New()
		if err := mnist.WriteIDX(h, x); err != nil {
			return nil, err
		}
		m.Files = append(m.Files, FolderFile{folderFileNames[k], hex.EncodeToString(h.Sum(nil))})
		f, err := os.Create(filepath.Join(part, folderFileNames[k]))
		if err != nil {
			return nil, err
		}
		if err := mnist.WriteIDX(f, x); err != nil {
			f.Close()
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(part, "folder.json"), append(b, '\n'), 0o644); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := os.Chmod(part, 0o755); err != nil {
		return nil, err
	}
	// The old conversion out of the way, the new one in, the old one gone.
	old := ""
	if _, err := os.Stat(cache); err == nil {
		old = part + ".old"
		if err := os.Rename(cache, old); err != nil {
			return nil, err
		}
	}
	if err := os.Rename(part, cache); err != nil {
		if old != "" {
			os.Rename(old, cache)
		}
		return nil, err
	}
	if old != "" {
		os.RemoveAll(old)
	}
	return m, nil
}

func readFolderManifest(cache string) (*FolderManifest, error) {
	b, err := infile.ReadAll(filepath.Join(cache, "folder.json"), "folder data set manifest", 4*infile.MB)
	if err != nil {
		return nil, err
	}
	var m FolderManifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(cache, "folder.json"), err)
	}
	if m.Version < 1 || m.Version > folderManifestVersion {
		return nil, fmt.Errorf("%s: version %d (this Attractor Lab reads 1 … %d)", filepath.Join(cache, "folder.json"), m.Version, folderManifestVersion)
	}
	if len(m.Files) != len(folderFileNames) || len(m.Classes) < 1 || len(m.Classes) > MaxFolderClasses {
		return nil, fmt.Errorf("%s: not a folder data set's manifest", filepath.Join(cache, "folder.json"))
	}
	return &m, nil
}

// FolderTrainMD5 is the md5 of folder data set name's training pictures
// (its manifest's), for a weights file trained on them.
func FolderTrainMD5(name string) (string, error) {
	cache, err := FolderCache(name)
	if err != nil {
		return "", err
	}
	m, err := readFolderManifest(cache)
	if err != nil {
		return "", err
	}
	return m.Files[0].MD5, nil
}

// LoadFolderData is the folder data set name ("NAME" of "folder:NAME")
// from its cache, every file md5-checked against its manifest: all its
// training pictures are the stored patterns. A missing or corrupt cache
// says how to make it again.
func LoadFolderData(name string) (*mnist.Data, error) {
	if err := CheckFolderName(name); err != nil {
		return nil, err
	}
	cache, err := FolderCache(name)
	if err != nil {
		return nil, err
	}
	m, err := readFolderManifest(cache)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("no data set %s%s here: make it with `attractorlab data --dataset DIR --name %s` (DIR: a folder with one sub-folder of pictures per class)", mnist.FolderPrefix, name, name)
		}
		return nil, err
	}
	mend := fmt.Sprintf("corrupt: run `attractorlab data --dataset %s --name %s` again", m.Source, name)
	files := make([]struct{ Name, MD5 string }, len(m.Files))
	for k, f := range m.Files {
		if f.Name != folderFileNames[k] {
			return nil, fmt.Errorf("%s: file %d is %q, want %q (%s)", filepath.Join(cache, "folder.json"), k+1, f.Name, folderFileNames[k], mend)
		}
		files[k] = struct{ Name, MD5 string }{f.Name, f.MD5}
	}
	train, test, err := mnist.LoadPairs(cache, files, mend)
	if err != nil {
		return nil, err
	}
	for _, s := range []*mnist.Set{train, test} {
		for _, l := range s.Labels {
			if int(l) >= len(m.Classes) {
				return nil, fmt.Errorf("%s: label %d, but %d classes (%s)", cache, l, len(m.Classes), mend)
			}
		}
	}
	if train.Len() != m.Train || test.Len() != m.Test {
		return nil, fmt.Errorf("%s: %d training and %d test pictures, the manifest says %d and %d (%s)", cache, train.Len(), test.Len(), m.Train, m.Test, mend)
	}
	return &mnist.Data{Train: train, Test: test, Source: "the folder " + m.Source, Dataset: mnist.FolderPrefix + name,
		ClassNames: slices.Clone(m.Classes), TrainMD5: m.Files[0].MD5}, nil
}
