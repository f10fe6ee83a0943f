"""The drivers of the deep learners (one per kind): they say *when* a learner learns and where
its batch comes from, and call ``update(policy, batch)``, the algorithm's own method."""
