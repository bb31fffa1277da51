"""Filling: the pytest plugin, the fill session, its checks, the predicted BAL and the options."""
