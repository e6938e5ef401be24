"""NVTX ranges for opmap from PyTorch: one per nn.Module forward, one per serving step, one
per request.

    import opmap_torch
    handle = opmap_torch.annotate(model, shapes=True)   # module ranges
    with opmap_torch.request(), opmap_torch.step("decode", batch=4):
        model(x)
    handle.remove()

Everything here is a no-op -- no range is pushed and no hook is even installed -- unless
opmap's injection library (libopmap_inject.so) is loaded in this process, so the calls can
stay in production code. "Loaded" means: LD_PRELOAD, NVTX_INJECTION64_PATH or
CUDA_INJECTION64_PATH names a path containing "libopmap_inject", or /proc/self/maps maps
such a file. ``force=True`` pushes the ranges anyway (tests, Nsight Systems).

Range names (the grammar opmap reads; python/opmap_torch/README.md):

    module  = "opmap.module " path " (" class ")" [ " shapes=" shapes ] ;
    path    = the module's name in model.named_modules() ("encoder.layer.0.attention"),
              the class name for the root module (whose name there is "") ;
    class   = type(module).__name__ ;
    shapes  = "[" [ shape { ", " shape } ] "]" ;   (* the forward's input tensors *)
    shape   = "[" [ N { ", " N } ] "]" ;            (* "[]" for a 0-d tensor *)
    step    = "step[" MODE [ " bs=" N ] [ " toks=" N ] "]"   (* SGLang's step span *)
            | "iteration" ;
    MODE    = "DECODE" | "EXTEND" | "MIXED" | "IDLE" ;
    request = "request" ;

e.g. ``opmap.module encoder.layer.0.attention.self (BertSelfAttention)
shapes=[[2, 10, 384], [2, 1, 10, 10]]`` (one line),
``opmap.module BertModel (BertModel)``, ``step[DECODE bs=4]``, ``step[EXTEND bs=4 toks=512]``.

Input tensors are those among the forward's positional arguments, then its keyword
arguments (in call order), looking one level into lists, tuples and mappings (their
values, in order: sentence-transformers passes a dict of features); other arguments are
not listed. The step and request names are the forms analysis/serving/step_annotation.h
and request_key.h recognise: a step range is an iteration of the request-latency subject
(`step:decode`, `step:prefill`), `request` one request.

Ranges are pushed with torch.cuda.nvtx.range_push and popped with range_pop, which work in
PyPI's CUDA builds of torch without a GPU. They nest per thread, as NVTX requires: a module
range is popped when its forward returns or raises (torch >= 2.1; before that, only when it
returns).
"""

import contextlib
import os
from collections.abc import Mapping
import threading

__version__ = "0.1.0"

__all__ = ["annotate", "step", "request", "injection_loaded", "module_range_name",
           "step_range_name", "Handle"]

_LIB = "libopmap_inject"
_ENV = ("LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH")
_maps_lock = threading.Lock()
_maps_cache = None


def _mapped():
    """True when /proc/self/maps maps libopmap_inject. Read once per process (the library
    is linked -z nodelete: once loaded it stays); refresh with injection_loaded(True)."""
    global _maps_cache
    with _maps_lock:
        if _maps_cache is None:
            try:
                with open("/proc/self/maps", "rb") as f:
                    _maps_cache = _LIB.encode() in f.read()
            except OSError:
                _maps_cache = False
        return _maps_cache


def injection_loaded(refresh=False):
    """Whether opmap's injection library is (or, through NVTX_INJECTION64_PATH, will be at
    the first NVTX call) loaded in this process."""
    global _maps_cache
    for var in _ENV:
        if _LIB in os.environ.get(var, ""):
            return True
    if refresh:
        with _maps_lock:
            _maps_cache = None
    return _mapped()


def _nvtx():
    import torch.cuda.nvtx  # looked up at each call, so tests may replace its functions
    return torch.cuda.nvtx


def _shape_list(args, kwargs):
    import torch
    shapes = []

    def add(v, depth):
        if isinstance(v, torch.Tensor):
            shapes.append(list(v.shape))
        elif depth == 0 and isinstance(v, (list, tuple)):
            for item in v:
                add(item, 1)
        elif depth == 0 and isinstance(v, Mapping):
            for item in v.values():
                add(item, 1)

    for a in args:
        add(a, 0)
    for a in (kwargs or {}).values():
        add(a, 0)
    return "[" + ", ".join("[" + ", ".join(str(int(d)) for d in s) + "]" for s in shapes) + "]"


def module_range_name(path, module, shapes=None):
    """The range name of one module forward: path as named_modules() gives it ("" for the
    root), shapes the text of ``shapes=`` or None."""
    cls = type(module).__name__
    name = "opmap.module %s (%s)" % (path or cls, cls)
    if shapes is not None:
        name += " shapes=" + shapes
    return name


class Handle:
    """What annotate() returns: remove() takes every hook off (idempotent). ``active`` is
    False when annotate() installed nothing (no injection library, not forced)."""

    def __init__(self, hooks):
        self._hooks = hooks
        self.active = bool(hooks)

    def remove(self):
        hooks, self._hooks = self._hooks, []
        for h in hooks:
            h.remove()
        self.active = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __len__(self):
        return len(self._hooks)


def annotate(model, shapes=False, force=False):
    """Push one NVTX range per forward of every nn.Module in ``model`` (the model itself
    included), named as the module docstring says; with ``shapes=True`` the names also list
    the forward's input tensor shapes (one name built per call). Returns a Handle; a no-op
    handle when the injection library is not loaded and ``force`` is False."""
    if not (force or injection_loaded()):
        return Handle([])
    hooks = []
    try:
        for path, module in model.named_modules():
            fixed = module_range_name(path, module)

            if shapes:
                def pre(mod, args, kwargs, _path=path):
                    _nvtx().range_push(module_range_name(_path, mod, _shape_list(args, kwargs)))
                hooks.append(module.register_forward_pre_hook(pre, with_kwargs=True))
            else:
                def pre(mod, args, _name=fixed):
                    _nvtx().range_push(_name)
                hooks.append(module.register_forward_pre_hook(pre))

            def post(mod, args, output):
                _nvtx().range_pop()
            try:
                hooks.append(module.register_forward_hook(post, always_call=True))
            except TypeError:  # torch < 2.1: no always_call
                hooks.append(module.register_forward_hook(post))
    except BaseException:
        for h in hooks:
            h.remove()
        raise
    return Handle(hooks)


_MODES = {"decode": "DECODE", "prefill": "EXTEND", "extend": "EXTEND", "mixed": "MIXED",
          "idle": "IDLE"}


def step_range_name(kind="decode", batch=None, tokens=None):
    """``step[DECODE bs=4]``, ``step[EXTEND bs=4 toks=512]``; kind "iteration" gives
    ``iteration``. kind: decode, prefill (= extend), mixed, idle, iteration."""
    k = str(kind).lower()
    if k == "iteration":
        return "iteration"
    if k not in _MODES:
        raise ValueError("opmap_torch.step: kind must be one of %s or iteration, not %r"
                         % (", ".join(sorted(_MODES)), kind))
    parts = ["step[" + _MODES[k]]
    for key, v in (("bs", batch), ("toks", tokens)):
        if v is not None:
            v = int(v)
            if v < 0:
                raise ValueError("opmap_torch.step: %s must be >= 0, not %d" % (key, v))
            parts.append("%s=%d" % (key, v))
    return " ".join(parts) + "]"


class _Range(contextlib.ContextDecorator):
    def __init__(self, name, force):
        self.name = name
        self._force = force
        self._pushed = threading.local()

    def __enter__(self):
        if self._force or injection_loaded():
            _nvtx().range_push(self.name)
            self._pushed.n = getattr(self._pushed, "n", 0) + 1
            return self.name
        return None

    def __exit__(self, *exc):
        n = getattr(self._pushed, "n", 0)
        if n:
            self._pushed.n = n - 1
            _nvtx().range_pop()
        return False


def step(kind="decode", batch=None, tokens=None, force=False):
    """Context manager (or decorator): one NVTX range around a serving step, named
    step_range_name(kind, batch, tokens) -- SGLang's step span form, which opmap reads as
    a step of the request-latency subject (step:decode, step:prefill). ``as`` gives the
    name, or None when nothing was pushed."""
    return _Range(step_range_name(kind, batch, tokens), force)


def request(force=False):
    """Context manager (or decorator): one NVTX range named exactly ``request``, opmap's
    request range (one request, over however many steps)."""
    return _Range("request", force)
