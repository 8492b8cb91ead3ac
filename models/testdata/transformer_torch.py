#!/usr/bin/python3
"""PyTorch twin of the recycled transformer block and the ViT (docs/maths.md §6).

  /usr/bin/python3 transformer_torch.py fixture OUT.safetensors
      writes two tiny networks made by PyTorch modules whose state_dict names
      are exactly the §9 names (a block with D=8, 2 heads, MLP 12, applied
      τ=3 times, and a 2-block "ViT"), each with a test input image and
      PyTorch's output image after every application (test.* tensors). The Go
      test TestTransformerPyTorchFixture loads them and compares.
  /usr/bin/python3 transformer_torch.py check WEIGHTS.safetensors
      loads weights written by Attractor Lab into the PyTorch module and runs
      them on a random image (shows that our files load in PyTorch).
  /usr/bin/python3 transformer_torch.py bench block|vit [THREADS]
      times a training step (forward, backward, AdamW) at batch 256 on this CPU,
      for comparison with Go's BenchmarkTransformerTrain.

Needs Debian's python3-torch (1.13). The safetensors helpers are shared with
bsa_torch.py.
"""
import math, os, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bsa_torch import write_safetensors, read_safetensors, patch_index

class Attention(nn.Module):
    def __init__(s, D, H, relu=False):
        super().__init__()
        s.H, s.relu = H, relu
        s.qkv = nn.Linear(D, 3 * D)
        s.proj = nn.Linear(D, D)

    def forward(s, x):  # x [B, T, D]
        B, T, D = x.shape
        hs = D // s.H
        q, k, v = s.qkv(x).split(D, dim=2)
        q, k, v = [t.view(B, T, s.H, hs).transpose(1, 2) for t in (q, k, v)]
        sc = q @ k.transpose(-2, -1) / math.sqrt(hs)
        att = F.relu(sc) / T if s.relu else sc.softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, D)
        return s.proj(y)

class MLP(nn.Module):
    def __init__(s, D, M):
        super().__init__()
        s.fc1, s.fc2 = nn.Linear(D, M), nn.Linear(M, D)

    def forward(s, x):
        return s.fc2(F.gelu(s.fc1(x)))  # exact (erf) GELU, PyTorch's default

class Block(nn.Module):
    def __init__(s, D, H, M, relu=False):
        super().__init__()
        s.ln1, s.attn = nn.LayerNorm(D), Attention(D, H, relu)
        s.ln2, s.mlp = nn.LayerNorm(D), MLP(D, M)

    def forward(s, x):
        u = x + s.attn(s.ln1(x))
        return u + s.mlp(s.ln2(u))

class Net(nn.Module):
    """Patch embedding + learned positions, Depth blocks, output linear on x − pos."""
    def __init__(s, D=64, H=4, M=128, depth=1, P=4, relu=False):
        super().__init__()
        s.P, s.N, s.A = P, (28 // P) ** 2, P * P
        s.embed = nn.Linear(s.A, D)
        s.pos = nn.Parameter(torch.randn(s.N, D) * 0.02)
        s.blocks = nn.ModuleList([Block(D, H, M, relu) for _ in range(depth)])
        s.out = nn.Linear(D, s.A)
        s.register_buffer("idx", patch_index(P), persistent=False)

    def forward(s, img, apps, every=True):
        """img [B, 784]; apps: block index per application. Returns the image after
        each application (every=True) or after the last one only."""
        x = s.embed(img[:, s.idx]) + s.pos
        outs = []
        for k, b in enumerate(apps):
            x = s.blocks[b](x)
            if not every and k < len(apps) - 1:
                continue
            tok = s.out(x - s.pos)  # [B, N, A]
            o = torch.zeros_like(img)
            o[:, s.idx.reshape(-1)] = tok.reshape(img.shape[0], -1)
            outs.append(o)
        return outs

def meta_of(net, model, D, H, M, depth):
    return {"model": model, "task": "fixture", "patch": "4", "dim": str(D), "heads": str(H), "mlp": str(M),
            "depth": str(depth), "pixel_gain": "2", "command": "transformer_torch.py fixture"}

def fixture(path):
    torch.manual_seed(7)
    tensors, meta = {}, {}
    for model, depth, apps in (("block", 1, [0, 0, 0]), ("vit", 2, [0, 1])):
        D, H, M = 8, 2, 12
        net = Net(D, H, M, depth)
        with torch.no_grad():  # non-trivial LayerNorm affine parameters
            for n, p in net.named_parameters():
                if "ln" in n:
                    p.add_(torch.randn_like(p) * 0.3)
        img = (torch.rand(1, 784) * 2 - 0.3)
        with torch.no_grad():
            outs = net(img, apps)
        sub = {}
        for n, p in net.state_dict().items():
            sub[n] = p
        sub["test.image"] = img[0]
        for k, o in enumerate(outs):
            sub["test.out%d" % k] = o[0]
        p = path.replace(".safetensors", "-%s.safetensors" % model)
        write_safetensors(p, sub, meta_of(net, model, D, H, M, depth))
        print("wrote", p, "applications", apps)

def load(path):
    ts, meta = read_safetensors(path)
    net = Net(int(meta["dim"]), int(meta["heads"]), int(meta["mlp"]), int(meta["depth"]), int(meta["patch"]),
              meta.get("attention") == "relu/seqlen")
    net.load_state_dict({k: v for k, v in ts.items() if not k.startswith("test.")}, strict=True)
    return net, meta

def check(path):
    net, meta = load(path)
    torch.manual_seed(0)
    img = torch.rand(4, 784)
    apps = [0] * 5 if meta["model"] == "block" else list(range(int(meta["depth"])))
    with torch.no_grad():
        outs = net(img, apps)
    print("loaded %s (%s, task %s) into PyTorch; output after %d applications: mean %.4f" %
          (path, meta["model"], meta.get("task"), len(apps), outs[-1].mean().item()))

def bench(model, threads=2):
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    depth = 1 if model == "block" else 5
    net = Net(depth=depth)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3, weight_decay=0.01)
    img, clean = torch.rand(256, 784), torch.rand(256, 784)
    apps = [0] * 5 if depth == 1 else list(range(5))
    def stepf():
        opt.zero_grad()
        loss = F.mse_loss(net(img, apps, every=False)[-1], clean)
        loss.backward()
        opt.step()
    for _ in range(2):
        stepf()
    n, t0 = 10, time.perf_counter()
    for _ in range(n):
        stepf()
    dt = (time.perf_counter() - t0) / n
    with torch.no_grad():
        t1 = time.perf_counter()
        for _ in range(n):
            net(img, apps, every=False)
        df = (time.perf_counter() - t1) / n
    print("PyTorch %s, %d threads, batch 256, τ = %d: train step %.1f ms = %.0f img/s; forward %.1f ms = %.0f img/s" %
          (torch.__version__, threads, len(apps), dt * 1e3, 256 / dt, df * 1e3, 256 / df))

if __name__ == "__main__":
    if sys.argv[1] == "fixture":
        fixture(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2])
    elif sys.argv[1] == "bench":
        bench(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 2)
