"""Single-source shortest-path kernels (the chapter's §3): the relax operator over a frontier
(relax.py: a thread or a virtual warp per frontier vertex, heavy vertices walked by a grid of
their own, improved vertices queued through the shared local queues and flush), Δ-stepping's
bucket gathering and the parent pass (steps.py); their argument groups in args.py."""
