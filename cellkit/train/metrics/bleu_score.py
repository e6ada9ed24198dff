"""``BleuScore``: BLEU of candidate token lists against lists of references.

>>> from cellkit import train
>>> cand = [['i', 'have', 'a', 'pen', 'on', 'my', 'desk']]
>>> refs = [[['i', 'have', 'a', 'pen', 'in', 'my', 'desk'], ['there', 'is', 'a', 'pen', 'on', 'the', 'desk']]]
>>> round(float(train.BleuScore()(cand, refs)), 7)
0.5946036
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .metric import Metric, check_type, rearrange_inputs

__all__ = ["BleuScore"]


def _count_ngram(tokens, n_gram):
    counter = Counter()
    for i in range(1, n_gram + 1):
        for j in range(len(tokens) - i + 1):
            counter[tuple(tokens[j:i + j])] += 1
    return counter


class BleuScore(Metric):
    """Corpus BLEU up to ``n_gram`` (1..4), with add-one ``smooth``ing optionally."""

    def __init__(self, n_gram=4, smooth=False):
        super().__init__()
        self.n_gram = check_type("n_gram", n_gram, [int], "BleuScore")
        if self.n_gram > 4 or self.n_gram < 1:
            raise ValueError(f"For 'BleuScore', the argument 'n_gram' should range from 1 to 4, but got {n_gram}.")
        self.smooth = check_type("smooth", smooth, [bool], "BleuScore")
        self.clear()

    def clear(self):
        self._numerator = np.zeros(self.n_gram)
        self._denominator = np.zeros(self.n_gram)
        self._precision_scores = np.zeros(self.n_gram)
        self._c = 0.0
        self._r = 0.0
        self._trans_len = 0
        self._ref_len = 0
        self._is_update = False

    @rearrange_inputs
    def update(self, *inputs):
        if len(inputs) != 2:
            raise ValueError("For 'BleuScore.update', it needs 2 inputs (candidate_corpus, reference_corpus), but "
                             f"got {len(inputs)}.")
        candidates, references_all = inputs
        if len(candidates) != len(references_all):
            raise ValueError("For 'BleuScore.update', 'translate_corpus' (inputs[0]) and 'reference_corpus' "
                             f"(inputs[1]) should be equal in length, but got {len(candidates)}, "
                             f"{len(references_all)}")
        for candidate, references in zip(candidates, references_all):
            self._c += len(candidate)
            ref_lens = [len(ref) for ref in references]
            diffs = [abs(len(candidate) - x) for x in ref_lens]
            self._r += ref_lens[diffs.index(min(diffs))]
            translation = _count_ngram(candidate, self.n_gram)
            reference = Counter()
            for ref in references:
                reference |= _count_ngram(ref, self.n_gram)
            clipped = translation & reference
            for gram in clipped:
                self._numerator[len(gram) - 1] += clipped[gram]
            for gram in translation:
                self._denominator[len(gram) - 1] += translation[gram]
        self._trans_len = np.array(self._c)
        self._ref_len = np.array(self._r)
        self._is_update = True

    def eval(self):
        if self._is_update is False:
            raise RuntimeError("Please call the 'update' method before calling 'eval' method.")
        if min(self._numerator) == 0.0:
            return np.array(0.0)
        if self.smooth:
            precision = (self._numerator + 1) / (self._denominator + 1)
        else:
            precision = self._numerator / self._denominator
        geometric_mean = np.exp(np.sum(np.array([1.0 / self.n_gram] * self.n_gram) * np.log(precision)))
        penalty = np.array(1.0) if self._c > self._r else np.exp(1 - self._ref_len / self._trans_len)
        return penalty * geometric_mean
