"""Deciding: apply or reject a proposal (:mod:`.apply`), many at once or as a
worker's batch (:mod:`.bulk`), and the auto-apply policy with its bulk step
(:mod:`.auto_apply`, :mod:`.auto_apply_bulk`).
"""
