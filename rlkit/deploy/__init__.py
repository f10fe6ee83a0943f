"""Using trained policies (docs/how-to/trained-policies.md): ``rk.save`` / ``rk.load``
(inference artifacts, :mod:`rlkit.deploy.save_load`), ``rk.export`` (ONNX,
:mod:`rlkit.deploy.export`). ``predict`` itself is the policies' own method
(:mod:`rlkit.policies.predict`). This layer sits above the learners (it knows every policy
kind) and below the recipes and the CLI."""
