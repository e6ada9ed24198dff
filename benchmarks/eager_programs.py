"""The eager programs of ``benchmarks.eager``: ordinary MindSpore 2.x scripts, PyNative, as their authors write them.

Each program is a function ``program(ms, smoke)`` of the framework module
(``import mindspore as ms`` or ``import cellkit as ms``): the same source runs
on both. It builds its model, runs a few steps and returns a number (a loss, a
token count) so that the work cannot be skipped. ``smoke`` makes it smaller.
Nothing here imports a framework: ``benchmarks.eager`` passes it in.
"""

from __future__ import annotations

import numpy as np

__all__ = ["PROGRAMS"]


def _data(shape, seed=0, kind="normal", high=10):
    rng = np.random.default_rng(seed)
    if kind == "int":
        return rng.integers(0, high, shape).astype(np.int32)
    return rng.normal(size=shape).astype(np.float32)


def lenet_momentum(ms, smoke):
    """A LeNet-5 training loop: ``value_and_grad`` over a loss Cell, ``nn.Momentum``, a print per step."""
    nn, ops = ms.nn, ms.ops

    class LeNet5(nn.Cell):
        def __init__(self, num_class=10):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid")
            self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid")
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
            self.flatten = nn.Flatten()
            self.fc1 = nn.Dense(16 * 5 * 5, 120)
            self.fc2 = nn.Dense(120, 84)
            self.fc3 = nn.Dense(84, num_class)

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            x = self.flatten(x)
            x = self.relu(self.fc1(x))
            x = self.relu(self.fc2(x))
            return self.fc3(x)

    net = LeNet5()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)
    losses = []
    for step in range(2 if smoke else 4):
        x = ms.Tensor(_data((8, 1, 32, 32), step))
        y = ms.Tensor(_data((8,), step, "int"))
        loss, grads = grad_fn(x, y)
        opt(grads)
        losses.append(float(loss.asnumpy()))
    return losses[-1]


def transformer_adamw(ms, smoke):
    """A pre-norm transformer block (attention written out, GELU MLP) trained with ``nn.AdamWeightDecay``."""
    nn, ops = ms.nn, ms.ops
    d, heads, seq, batch = (32, 2, 8, 2) if smoke else (64, 4, 16, 4)

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm((d,))
            self.ln2 = nn.LayerNorm((d,))
            self.qkv = nn.Dense(d, 3 * d)
            self.proj = nn.Dense(d, d)
            self.fc1 = nn.Dense(d, 4 * d)
            self.fc2 = nn.Dense(4 * d, d)
            self.act = nn.GELU()

        def construct(self, x):
            b, s, _ = x.shape
            qkv = self.qkv(self.ln1(x)).reshape(b, s, 3, heads, d // heads)
            q, k, v = ops.split(qkv.transpose(2, 0, 3, 1, 4), 1, axis=0)
            q, k, v = q.squeeze(0), k.squeeze(0), v.squeeze(0)
            scores = ops.matmul(q, k.swapaxes(-1, -2)) / float(np.sqrt(d // heads))
            att = ops.softmax(scores, axis=-1)
            h = ops.matmul(att, v).transpose(0, 2, 1, 3).reshape(b, s, d)
            x = x + self.proj(h)
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))

    class LM(nn.Cell):
        def __init__(self, vocab=50):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.block = Block()
            self.head = nn.Dense(d, vocab)

        def construct(self, ids):
            return self.head(self.block(self.emb(ids)))

    net = LM()
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-3, weight_decay=0.01)

    def forward(ids, labels):
        logits = net(ids)
        return loss_fn(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1))

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)
    loss = None
    for step in range(2 if smoke else 3):
        ids = ms.Tensor(_data((batch, seq), step, "int", 50))
        labels = ms.Tensor(_data((batch, seq), step + 100, "int", 50))
        loss, grads = grad_fn(ids, labels)
        opt(grads)
    return float(loss.asnumpy())


def unet_adam(ms, smoke):
    """A two-level UNet (Conv-BN-ReLU, max pooling, transposed convolutions, skip concatenation), two Adam steps."""
    nn, ops = ms.nn, ms.ops
    c = 4 if smoke else 8

    def block(cin, cout):
        return nn.SequentialCell([nn.Conv2d(cin, cout, 3), nn.BatchNorm2d(cout), nn.ReLU(),
                                  nn.Conv2d(cout, cout, 3), nn.BatchNorm2d(cout), nn.ReLU()])

    class UNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.down1, self.down2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
            self.pool = nn.MaxPool2d(2, 2)
            self.up2 = nn.Conv2dTranspose(4 * c, 2 * c, 2, stride=2)
            self.dec2 = block(4 * c, 2 * c)
            self.up1 = nn.Conv2dTranspose(2 * c, c, 2, stride=2)
            self.dec1 = block(2 * c, c)
            self.out = nn.Conv2d(c, 2, 1)

        def construct(self, x):
            d1 = self.down1(x)
            d2 = self.down2(self.pool(d1))
            m = self.mid(self.pool(d2))
            u2 = self.dec2(ops.cat((self.up2(m), d2), axis=1))
            u1 = self.dec1(ops.cat((self.up1(u2), d1), axis=1))
            return self.out(u1)

    net = UNet()
    loss_fn = nn.CrossEntropyLoss()
    opt = nn.Adam(net.trainable_params(), learning_rate=1e-3)

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, opt.parameters)
    size = 16 if smoke else 32
    loss = None
    for step in range(2):
        x = ms.Tensor(_data((2, 3, size, size), step))
        y = ms.Tensor(_data((2, size, size), step, "int", 2))
        loss, grads = grad_fn(x, y)
        opt(grads)
    return float(loss.asnumpy())


def create_model_eval(ms, smoke):
    """A mindcv-style ``create_model``: a ResNet-18 (BasicBlocks, BatchNorm, He initializers) built, then one eval batch."""
    nn, ops = ms.nn, ms.ops
    from_init = ms.common.initializer

    class BasicBlock(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1,
                                   weight_init=from_init.HeNormal(mode="fan_out", nonlinearity="relu"))
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, pad_mode="pad", padding=1,
                                   weight_init=from_init.HeNormal(mode="fan_out", nonlinearity="relu"))
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride=stride), nn.BatchNorm2d(cout)])

        def construct(self, x):
            identity = x if self.down is None else self.down(x)
            out = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(out)) + identity)

    class ResNet(nn.Cell):
        def __init__(self, widths, num_classes=1000):
            super().__init__()
            self.stem = nn.SequentialCell([nn.Conv2d(3, widths[0], 7, stride=2, pad_mode="pad", padding=3),
                                           nn.BatchNorm2d(widths[0]), nn.ReLU(),
                                           nn.MaxPool2d(3, 2, pad_mode="same")])
            layers, cin = [], widths[0]
            for i, w in enumerate(widths):
                layers += [BasicBlock(cin, w, 1 if i == 0 else 2), BasicBlock(w, w, 1)]
                cin = w
            self.layers = nn.SequentialCell(layers)
            self.pool = ops.ReduceMean(keep_dims=False)
            self.fc = nn.Dense(cin, num_classes,
                               weight_init=from_init.TruncatedNormal(0.02), bias_init="zeros")

        def construct(self, x):
            return self.fc(self.pool(self.layers(self.stem(x)), (2, 3)))

    def create_model(name, num_classes=1000):
        widths = {"resnet18": (64, 128, 256, 512), "resnet18_small": (16, 32, 64, 128)}[name]
        return ResNet(widths, num_classes)

    net = create_model("resnet18_small" if smoke else "resnet18")
    net.set_train(False)
    x = ms.Tensor(_data((1, 3, 64, 64)))
    probs = ops.softmax(net(x), axis=-1)
    return float(probs.max().asnumpy())


def dataset_model_train(ms, smoke):
    """A ``NumpySlicesDataset`` (map, shuffle, batch) into ``Model.train`` with ``nn.Momentum`` and an accuracy eval."""
    nn = ms.nn
    n = 64 if smoke else 256
    rng = np.random.default_rng(0)
    features = rng.normal(size=(n, 20)).astype(np.float32)
    labels = (features[:, :10].sum(axis=1) > 0).astype(np.int32)

    def scale(x):
        return (x * 0.5).astype(np.float32)

    def make(data):
        ds = ms.dataset.NumpySlicesDataset(data, column_names=["x", "y"], shuffle=False)
        ds = ds.map(operations=scale, input_columns=["x"])
        return ds.shuffle(buffer_size=n).batch(32, drop_remainder=True)

    net = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 2)])
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Momentum(net.trainable_params(), learning_rate=0.05, momentum=0.9)
    model = ms.Model(net, loss_fn, opt, metrics={"acc": nn.Accuracy()})
    model.train(2, make((features, labels)), dataset_sink_mode=False)
    return float(model.eval(make((features, labels)), dataset_sink_mode=False)["acc"])


def kv_generation(ms, smoke):
    """Greedy decoding with a key/value cache that grows by one position per token (a new shape every step)."""
    nn, ops = ms.nn, ms.ops
    d, vocab, layers = 32, 64, 2
    steps = 6 if smoke else 16

    class Layer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Dense(d, d) for _ in range(4))
            self.ln = nn.LayerNorm((d,))
            self.mlp = nn.SequentialCell([nn.Dense(d, 2 * d), nn.GELU(), nn.Dense(2 * d, d)])

        def construct(self, x, cache_k, cache_v):
            h = self.ln(x)
            k = ops.cat((cache_k, self.k(h)), axis=1)
            v = ops.cat((cache_v, self.v(h)), axis=1)
            att = ops.softmax(ops.matmul(self.q(h), k.swapaxes(1, 2)) / float(np.sqrt(d)), axis=-1)
            x = x + self.o(ops.matmul(att, v))
            return x + self.mlp(x), k, v

    class Decoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.layers = nn.CellList([Layer() for _ in range(layers)])
            self.head = nn.Dense(d, vocab)

        def construct(self, token, caches):
            x = self.emb(token)
            new = []
            for layer, (ck, cv) in zip(self.layers, caches):
                x, ck, cv = layer(x, ck, cv)
                new.append((ck, cv))
            return self.head(x), new

    net = Decoder()
    net.set_train(False)
    caches = [(ops.zeros((1, 0, d), ms.float32), ops.zeros((1, 0, d), ms.float32)) for _ in range(layers)]
    token = ms.Tensor([[1]], ms.int32)
    out = []
    for _ in range(steps):
        logits, caches = net(token, caches)
        token = ops.argmax(logits[:, -1], dim=-1).reshape(1, 1).astype(ms.int32)
        out.append(int(token.asnumpy()[0, 0]))
    return float(len(out) + sum(out) * 0)


PROGRAMS = {
    "lenet_momentum": lenet_momentum,
    "transformer_adamw": transformer_adamw,
    "unet_adam": unet_adam,
    "create_model_eval": create_model_eval,
    "dataset_model_train": dataset_model_train,
    "kv_generation": kv_generation,
}
