"""The byte-level transformer language model of the training measurements (text_corpus.py's
bytes): pre-norm GPT blocks with causal attention, 1.26 M parameters at the default size.

    model = ByteLM()                  # DIM 128, 6 layers, 4 heads, context 64
    loss = model.loss(inputs, targets)
"""
import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 256


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(
            2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class ByteLM(nn.Module):
    def __init__(self, dim=128, layers=6, heads=4, context=64):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, dim)
        self.pos = nn.Parameter(torch.randn(context, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, VOCAB)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def loss(self, inputs, targets):
        return F.cross_entropy(self(inputs).reshape(-1, VOCAB), targets.reshape(-1))

    @torch.no_grad()
    def validation_loss(self, windows, batch=64):
        """Mean loss over validation windows (text_corpus.validation_windows)."""
        total = 0.0
        for i in range(0, windows.shape[0], batch):
            w = windows[i:i + batch]
            total += self.loss(w[:, :-1], w[:, 1:]).item() * w.shape[0]
        return total / windows.shape[0]
