"""Model artifacts: a :class:`Model`'s estimator to bytes and back, every library error a SnapshotError.

* scikit-learn: a joblib pickle. Unpickling runs code, so :func:`deserialize` must only ever see bytes
  whose sha256 the caller checked against the registry's metadata (``Registry.load`` does).
* torch: ``{"state_dict": ...}`` saved with ``torch.save`` and read with ``torch.load(weights_only=True)``,
  which refuses anything but tensors and plain containers; the architecture is rebuilt from the module
  config: ``builder: build_mlp`` (:func:`fairmon.registry.build_mlp`) or ``builder: import``, a module
  trained elsewhere rebuilt by its own importable builder (:mod:`fairmon.registry._torch_module`). A file that holds more than tensors is refused as
  tampered (:data:`ERR_TORCH_UNSAFE`) — never retried with ``weights_only`` off, whatever torch's own
  message suggests; a corrupt archive or a state_dict that does not fit the module is
  :data:`ERR_ARTIFACT_LOAD`. Both name the file and the model version.

Examples
--------
>>> _unsafe_detail(ValueError("... Unsupported global: GLOBAL posix.system was not an allowed global"))
'unsupported global posix.system'
>>> _short("Error(s) in loading state_dict:\\n\\tsize mismatch for net.0.weight")
'Error(s) in loading state_dict: size mismatch for net.0.weight'
"""

from __future__ import annotations

import io
import pickle
import re
from typing import Any

from fairmon.errors import SnapshotError
from fairmon.registry._snapshot import SnapshotInfo
from fairmon.registry._torch_module import module_from_config
from fairmon.registry.model import Model, build_mlp

__all__ = [
    "serialize",
    "deserialize",
    "ERR_TORCH_MODULE",
    "ERR_TORCH_CONFIG",
    "ERR_TORCH_UNSAFE",
    "ERR_ARTIFACT_LOAD",
    "ERR_FRAMEWORK",
]

ERR_TORCH_MODULE = (
    "torch snapshots store a state_dict plus the module config; the module must be built by "
    "fairmon.registry.build_mlp or registered with its builder (fairmon model register --builder) (got {cls})"
)
ERR_TORCH_CONFIG = "snapshot {name}:{version} has an unknown torch module config {config}"
ERR_TORCH_UNSAFE = (
    "snapshot {name}:{version}: torch artifact {path!r} holds more than tensors ({detail}); refused "
    "without loading it: a registered state_dict never does, so the file was tampered with or not "
    "written by fairmon; re-register the model"
)
ERR_ARTIFACT_LOAD = "snapshot {name}:{version}: artifact {path!r} cannot be loaded as a {framework} model: {detail}"
ERR_FRAMEWORK = "snapshot {name}:{version} has unknown framework {framework!r}"

#: how much of a library's error text a message quotes
_DETAIL_CHARS = 200
#: the object a weights-only load refused, in torch's message ("Unsupported global: GLOBAL os.system ...")
_GLOBAL_RE = re.compile(r"GLOBAL\s+([\w.]+)")


def _short(text: str) -> str:
    """A library's error text on one line, bounded (``load_state_dict`` puts the cause on line two)."""
    line = " ".join(ln.strip() for ln in text.splitlines() if ln.strip())
    return line if len(line) <= _DETAIL_CHARS else line[: _DETAIL_CHARS - 3] + "..."


def _unsafe_detail(exc: BaseException) -> str:
    """What torch's weights-only unpickler refused (its message otherwise advises switching it off)."""
    m = _GLOBAL_RE.search(str(exc))
    return f"unsupported global {m.group(1)}" if m else "refused by torch's weights-only unpickler"


def serialize(model: Model) -> tuple[bytes, str, dict[str, Any] | None, dict[str, str]]:
    """``(artifact bytes, artifact file name, torch module config or None, library versions)``."""
    buf = io.BytesIO()
    if model.framework == "sklearn":
        import joblib  # heavy: scikit-learn's pickler, only when a model is saved
        import sklearn

        joblib.dump(model.estimator, buf)
        return buf.getvalue(), "model.joblib", None, {"sklearn": sklearn.__version__}
    import torch  # heavy: only for torch snapshots

    module = model.estimator
    config_fn = getattr(module, "config", None)
    if type(module).__name__ not in ("MLP", "ImportedModule") or not callable(config_fn):
        raise SnapshotError(ERR_TORCH_MODULE.format(cls=type(module).__name__))
    state = {k: v.detach().cpu() for k, v in module.state_dict().items()}
    torch.save({"state_dict": state}, buf)
    config = {"builder": "build_mlp", **config_fn()}  # an ImportedModule's config names its own builder
    return buf.getvalue(), "model.pt", config, {"torch": torch.__version__}


def deserialize(info: SnapshotInfo, blob: bytes, path: str) -> Any:
    """The estimator in ``blob`` (the artifact at ``path`` of version ``info``, checksum verified)."""
    if info.framework == "sklearn":
        import joblib  # heavy: only when a scikit-learn snapshot is loaded

        try:
            # Safe only because the caller verified the sha256 of these exact bytes (see module doc).
            return joblib.load(io.BytesIO(blob))
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError,
                IndexError, KeyError) as exc:
            raise SnapshotError(ERR_ARTIFACT_LOAD.format(name=info.name, version=info.version, path=path,
                                                         framework="sklearn", detail=_short(str(exc))
                                                         or type(exc).__name__)) from exc
    if info.framework == "torch":
        return _load_torch(info, blob, path)
    raise SnapshotError(ERR_FRAMEWORK.format(name=info.name, version=info.version, framework=info.framework))


def _load_torch(info: SnapshotInfo, blob: bytes, path: str) -> Any:
    import torch  # heavy: only when a torch snapshot is loaded

    cfg = info.module_config or {}
    if cfg.get("builder") not in ("build_mlp", "import"):
        raise SnapshotError(ERR_TORCH_CONFIG.format(name=info.name, version=info.version, config=cfg))
    try:
        payload = torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:  # the weights-only unpickler met a non-tensor object
        raise SnapshotError(ERR_TORCH_UNSAFE.format(name=info.name, version=info.version, path=path,
                                                    detail=_unsafe_detail(exc))) from exc
    except (RuntimeError, EOFError, ValueError, OSError) as exc:  # corrupt or truncated archive
        raise SnapshotError(ERR_ARTIFACT_LOAD.format(name=info.name, version=info.version, path=path,
                                                     framework="torch", detail=_short(str(exc))
                                                     or type(exc).__name__)) from exc
    try:
        if not isinstance(payload, dict) or "state_dict" not in payload:
            raise ValueError("no 'state_dict' in the file")
        if cfg["builder"] == "import":
            module = module_from_config(cfg)  # imports the builder named in the (trusted) metadata
        else:
            module = build_mlp(int(cfg["n_inputs"]), tuple(int(h) for h in cfg.get("hidden", ())))
        module.load_state_dict(payload["state_dict"])
    except (RuntimeError, ValueError, TypeError, KeyError) as exc:  # does not fit the module config
        raise SnapshotError(ERR_ARTIFACT_LOAD.format(name=info.name, version=info.version, path=path,
                                                     framework="torch", detail=_short(str(exc))
                                                     or type(exc).__name__)) from exc
    return module
