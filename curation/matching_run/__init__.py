"""The matching run: propose over the name blocks, then apply what the
auto-apply policy clears; in one process (:mod:`.run`) or fanned out over
Celery workers, a lock a block (:mod:`.fanout`).
"""
