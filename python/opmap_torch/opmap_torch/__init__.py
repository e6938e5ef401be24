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
import time

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


class _Gate:
    """Whether a window wants NVTX ranges now: libopmap_inject's exported
    ``int opmap_nvtx_ranges_wanted(void)`` (1 while a window capturing NVTX is open, or
    graph-node stacks are kept), found through this process's maps. Until it is found --
    under NVTX_INJECTION64_PATH the library loads at the first NVTX call; a library older
    than the symbol never has it -- ranges are always wanted (looked for again each second
    while not found)."""

    _RETRY_S = 1.0

    def __init__(self):
        self._fn = None
        self._next_try = 0.0
        self.resolved = False  # the library's function is in use

    def __call__(self):
        fn = self._fn
        if fn is not None:
            return fn() != 0
        now = time.monotonic()
        if now < self._next_try:
            return True
        self._next_try = now + self._RETRY_S
        fn = _find_wanted()
        if fn is None:
            return True
        self._fn, self.resolved = fn, True
        return fn() != 0


def _find_wanted():
    """libopmap_inject's opmap_nvtx_ranges_wanted, or None (not mapped, or too old)."""
    import ctypes
    try:
        with open("/proc/self/maps", "rb") as f:
            maps = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    for line in maps.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and _LIB in parts[5] and not parts[5].endswith("(deleted)"):
            try:
                # RTLD_NOLOAD: the copy already in the process, or nothing.
                lib = ctypes.CDLL(parts[5], mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
                fn = lib.opmap_nvtx_ranges_wanted
            except (OSError, AttributeError):
                return None
            fn.restype = ctypes.c_int
            fn.argtypes = []
            return fn
    return None


_GATE = _Gate()


def _always():
    return True


class Handle:
    """What annotate() returns: remove() takes every hook off (idempotent). ``active`` is
    False when annotate() installed nothing (no injection library, not forced);
    len() is the number of hooks installed now."""

    def __init__(self, annotator=None):
        self._annotator = annotator
        self.active = annotator is not None

    def remove(self):
        annotator, self._annotator = self._annotator, None
        if annotator is not None:
            annotator.remove()
        self.active = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
        return False

    def __len__(self):
        return 0 if self._annotator is None else self._annotator.hook_count()


def _register_pair(module, pre, post, with_kwargs):
    hooks = [module.register_forward_pre_hook(pre, with_kwargs=True) if with_kwargs
             else module.register_forward_pre_hook(pre)]
    try:
        hooks.append(module.register_forward_hook(post, always_call=True))
    except TypeError:  # torch < 2.1: no always_call
        hooks.append(module.register_forward_hook(post))
    return hooks


class _Annotator:
    """The hooks of one annotate() call. The root module's pair is always installed; the
    other modules' only while the gate says a window wants ranges, decided in the root's
    pre-hook when no other forward of the model is in flight (so every range a forward
    pushes is popped by the same hooks). A dormant process pays two hook calls and one
    gate call per model forward."""

    def __init__(self, model, shapes, gate):
        self._shapes = shapes
        self._gate = gate
        self._lock = threading.Lock()
        self._in_flight = 0
        self._tls = threading.local()
        self._children = []  # (path, module) below the root
        self._child_hooks = []  # installed while the gate is open
        self._root_path = ""
        root = None
        for path, module in model.named_modules():
            if root is None:
                root, self._root_path = module, path
            else:
                self._children.append((path, module))
        self._root_name = module_range_name(self._root_path, root)
        self._root_hooks = _register_pair(root, self._root_pre, self._root_post, True)
        if gate is _always:
            self._install_children()

    def hook_count(self):
        return len(self._root_hooks) + len(self._child_hooks)

    def remove(self):
        with self._lock:
            hooks = self._root_hooks + self._child_hooks
            self._root_hooks, self._child_hooks = [], []
        for h in hooks:
            h.remove()

    def _install_children(self):
        hooks = []
        try:
            for path, module in self._children:
                if self._shapes:
                    def pre(mod, args, kwargs, _path=path):
                        _nvtx().range_push(
                            module_range_name(_path, mod, _shape_list(args, kwargs)))
                else:
                    def pre(mod, args, _name=module_range_name(path, module)):
                        _nvtx().range_push(_name)

                def post(mod, args, output):
                    _nvtx().range_pop()
                hooks += _register_pair(module, pre, post, self._shapes)
        except BaseException:
            for h in hooks:
                h.remove()
            raise
        self._child_hooks = hooks

    def _remove_children(self):
        hooks, self._child_hooks = self._child_hooks, []
        for h in hooks:
            h.remove()

    def _root_pre(self, mod, args, kwargs):
        with self._lock:
            if not self._root_hooks:
                return  # removed while this forward started
            self._in_flight += 1
            if self._in_flight == 1:
                wanted = bool(self._gate())
                if wanted and not self._child_hooks and self._children:
                    self._install_children()
                elif not wanted and self._child_hooks:
                    self._remove_children()
                on = wanted
            else:
                on = bool(self._child_hooks) or not self._children and bool(self._gate())
        stack = getattr(self._tls, "stack", None)
        if stack is None:
            stack = self._tls.stack = []
        stack.append(on)
        if on:
            name = self._root_name
            if self._shapes:
                name = module_range_name(self._root_path, mod, _shape_list(args, kwargs))
            _nvtx().range_push(name)

    def _root_post(self, mod, args, output):
        stack = getattr(self._tls, "stack", None)
        if not stack:
            return
        on = stack.pop()
        with self._lock:
            self._in_flight -= 1
        if on:
            _nvtx().range_pop()


def annotate(model, shapes=False, force=False):
    """Push one NVTX range per forward of every nn.Module in ``model`` (the model itself
    included), named as the module docstring says; with ``shapes=True`` the names also list
    the forward's input tensor shapes (one name built per call). Returns a Handle; a no-op
    handle when the injection library is not loaded and ``force`` is False.

    With the library loaded, the per-module hooks are installed only while one of its
    windows wants NVTX ranges (decided at the start of each forward of ``model``), so a
    dormant process pays one check per forward; ``force=True`` keeps them on always. A
    window that opens during a forward gets that forward's module ranges from the next
    one. Modules called outside ``model``'s forward get ranges only while the hooks are
    installed."""
    if not (force or injection_loaded()):
        return Handle()
    return Handle(_Annotator(model, shapes, _always if force else _GATE))


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
        if self._force or (injection_loaded() and _GATE()):
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
