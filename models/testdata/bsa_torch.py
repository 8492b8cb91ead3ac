#!/usr/bin/python3
"""PyTorch twin of the bare self-attention (docs/maths.md §3-4) and safetensors I/O.

  /usr/bin/python3 bsa_torch.py fixture OUT.safetensors.gz
      writes a P=2, d=8 network made in PyTorch (sparse, quantised couplings so the
      fixture stays small) with the §9 names, plus the input state and PyTorch's
      results for three steps of a masking run (test.* tensors); the Go test
      TestPyTorchFixture loads it and compares.
  /usr/bin/python3 bsa_torch.py check WEIGHTS.safetensors [STEPS]
      loads weights written by Attractor Lab in PyTorch, runs the dynamics on a
      random-noise image, and times one step (for comparison with Go's benchmark).
  /usr/bin/python3 bsa_torch.py bench WEIGHTS.safetensors IMAGES STEPS [THREADS]
      the reference for whole-command speed: the dynamics alone (no metrics) on
      IMAGES random-noise images, batched 4 at a time, STEPS steps each; prints
      the seconds taken (`make bench-commands` sets it beside `reproduce`).

Needs Debian's python3-torch (1.13); torch of that age has no safetensors module,
so the format (8-byte little-endian header length, JSON header, raw data) is
written and read here directly.
"""
import gzip, json, math, struct, sys, time
import numpy as np
import torch

def write_safetensors(path, tensors, meta):
    header, blobs, off = {"__metadata__": meta}, [], 0
    for name in sorted(tensors):
        a = tensors[name].detach().cpu().numpy().astype("<f4")
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    data = struct.pack("<Q", len(h)) + h + b"".join(blobs)
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "wb") as f:
        f.write(data)

def read_safetensors(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {})
    body = data[8 + n:]
    out = {}
    for name, e in header.items():
        assert e["dtype"] == "F32", name
        a, b = e["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(body[a:b], dtype="<f4").reshape(e["shape"]).copy())
    return out, meta

def patch_index(P):
    g = 28 // P
    idx = []
    for i in range(g * g):
        r0, c0 = (i // g) * P, (i % g) * P
        idx.append([(r0 + k // P) * 28 + c0 + k % P for k in range(P * P)])
    return torch.tensor(idx)

def encode(F, img, P, masked=None):
    idx = patch_index(P)
    p = img[idx]                                   # N, P²
    n = torch.sqrt(p ** 2 + (1 - p) ** 2)
    s = torch.stack([p / n, (1 - p) / n], dim=-1).reshape(p.shape[0], -1)  # interleaved
    x = s @ F.T
    if masked is not None:
        x[masked] = 0
    return x

def layer_norm(x, masked=None):
    if masked is None:
        return (x - x.mean(0)) / (x.std(0, unbiased=True) + 1e-9)
    keep = ~masked
    mu, sd = x[keep].mean(0), x[keep].std(0, unbiased=False)
    xh = (x - mu) / (sd + 1e-9)
    xh[masked] = 0
    return xh

def step(J, x, lam=1.0, gamma=0.5, clamp=20.0, masked=None, first=False):
    """One step of §4; returns the new state, the attention and the energy of x."""
    xh = layer_norm(x, masked if first else None)
    V = torch.einsum("ijde,je->ijd", J, xh)
    s = torch.einsum("id,ijd->ij", xh, V).clamp(max=clamp)
    s.fill_diagonal_(-math.inf)
    if first and masked is not None:
        s[:, masked] = -math.inf
    a = torch.softmax(lam * s, dim=1)
    energy = -(torch.logsumexp(lam * s, dim=1) / lam).sum()
    out = gamma * torch.einsum("ij,ijd->id", a, V) + x
    return out / (out.norm(dim=1).mean() + 1e-9), a, energy

def fixture(path):
    torch.manual_seed(0)
    P, d = 2, 8
    N, a = (28 // P) ** 2, 2 * P * P
    q, _ = torch.linalg.qr(torch.randn(d, a))
    F = q / math.sqrt(a)
    g = 28 // P
    J = torch.zeros(N, N, d, d)
    for i in range(N):
        for j in range(N):
            if i != j and abs(i // g - j // g) <= 1 and abs(i % g - j % g) <= 1:
                J[i, j] = torch.round(torch.randn(d, d) * 8) / 16   # quantised: compresses
    img = torch.zeros(784)
    img[torch.randperm(784)[:200]] = torch.rand(200)
    masked = torch.zeros(N, dtype=torch.bool)
    masked[torch.randperm(N)[:58]] = True
    x = encode(F, img, P, masked)
    t = {"J": J, "F": F, "test.image": img, "test.masked": masked.float(), "test.x0": x}
    for k in range(3):
        x, al, e = step(J, x, masked=masked, first=(k == 0))
        t[f"test.x{k+1}"], t[f"test.alpha{k+1}"], t[f"test.energy{k}"] = x, al, e.reshape(1)
    meta = {"model": "bsa", "patch": "2", "d": "8", "pixel_gain": "2", "lambda_train": "5", "clamp": "20",
            "command": "python3 models/testdata/bsa_torch.py fixture " + path}
    write_safetensors(path, t, meta)

def check(path, steps=100):
    t, meta = read_safetensors(path)
    J, F = t["J"], t["F"]
    P = int(meta["patch"])
    print(path, meta.get("command"), {k: list(v.shape) for k, v in t.items()})
    torch.manual_seed(1)
    img = torch.rand(784)
    x = encode(F, img, P)
    torch.set_num_threads(int(sys.argv[4]) if len(sys.argv) > 4 else torch.get_num_threads())
    with torch.no_grad():
        step(J, x)
        t0 = time.perf_counter()
        for _ in range(steps):
            x, _, e = step(J, x)
        dt = (time.perf_counter() - t0) / steps
    print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads: one step {dt*1e3:.3f} ms; energy after {steps} steps {e.item():.4f}")

def bstep(J2, x, lam=1.0, gamma=0.5, clamp=20.0):
    """step() for a batch x of shape B, N, d (no masks: the steps after the
    first), as two batched matrix products over the query token i with
    J2[i] = J[i] as a d × (N·d) matrix (rows d, columns (j, e))."""
    B, N, d = x.shape
    xh = (x - x.mean(1, keepdim=True)) / (x.std(1, unbiased=True, keepdim=True) + 1e-9)
    xi = xh.permute(1, 0, 2)                                  # N(i), B, d
    u = torch.bmm(xi, J2)                                     # N(i), B, N·d: x̂_i J_ij
    s = (u.view(N, B, N, d) * xh.unsqueeze(0)).sum(-1)        # N(i), B, N(j)
    s = s.clamp(max=clamp)
    s[torch.arange(N), :, torch.arange(N)] = -math.inf
    a = torch.softmax(lam * s, dim=2)
    w = (a.unsqueeze(-1) * xh.unsqueeze(0)).reshape(N, B, N * d)  # a_ij x̂_j
    out = gamma * torch.bmm(w, J2.transpose(1, 2)).permute(1, 0, 2) + x   # Σ_j a_ij J_ij x̂_j
    return out / (out.norm(dim=2).mean(1, keepdim=True).unsqueeze(2) + 1e-9)


BATCH = 4  # images stepped together: 4 ran faster than 16 or 50 here (the batch's products outgrow the cache)
def bench(path, images, steps, threads):
    t, meta = read_safetensors(path)
    J, F = t["J"], t["F"]
    P = int(meta["patch"])
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    xs = torch.stack([encode(F, torch.rand(784), P) for _ in range(images)])
    N, d = J.shape[0], J.shape[2]
    J2 = J.permute(0, 2, 1, 3).reshape(N, d, N * d).contiguous()
    with torch.no_grad():
        # the batched step against the per-image one
        want, _, _ = step(J, xs[0])
        got = bstep(J2, xs[:1])[0]
        assert (want - got).abs().max() < 1e-4, (want - got).abs().max()
        bstep(J2, xs[:2])
        t0 = time.perf_counter()
        for b in range(0, images, BATCH):
            x = xs[b:b + BATCH]
            for _ in range(steps):
                x = bstep(J2, x)
        dt = time.perf_counter() - t0
    print(f"PyTorch {torch.__version__}, {threads} threads: {images} images x {steps} steps in {dt:.2f} s")

if __name__ == "__main__":
    if sys.argv[1] == "fixture":
        fixture(sys.argv[2])
    elif sys.argv[1] == "bench":
        bench(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]) if len(sys.argv) > 5 else 2)
    else:
        check(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 100)
