#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.

"""The request and response samples of the API reference, checked.

The reference (``api-ref/source``) shows the JSON files of
``doc/api_samples/<area>/``: ``<name>-req.json`` is a request body,
``<name>-resp.json`` the answer. The functional tests send the request
samples and compare the answers with the response samples through
:class:`Samples`, so the reference cannot drift from the code. In a
response sample

* a UUID stands for any UUID, and for the same one wherever the samples
  of a test repeat it: the first answer that shows it binds it, and the
  request samples sent afterwards carry the bound value;
* a date (``2030-01-10T09:00:00.000000``, ``2030-01-10 09:00``, ...)
  stands for any date written the same way;
* a value of a key of :data:`ANY_STRING` (``adminPass``) stands for any
  string;
* every other value, every key and the length of every list must be as
  the answer has them, with the test's ``aliases`` (e.g. the harness's
  endpoint for the one a reader sees) applied to the answer's strings.

``RESERVATION_GENERATE_SAMPLES=1`` writes each answer as its response
sample instead, keeping the old sample's ids and dates where they still
match, so that a change of the API is one reviewed diff of the samples.
"""

import json
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLES = os.path.join(TOP, 'doc', 'api_samples')
GENERATE = os.environ.get('RESERVATION_GENERATE_SAMPLES') == '1'
UUID = r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
DATE = (r'\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?'
        r'(?:Z|[+-]\d{2}:?\d{2})?')
# One UUID or one date inside a string of a sample.
PLACEHOLDER = re.compile('(%s)|(%s)' % (UUID, DATE))
#: Keys whose values are random by nature.
ANY_STRING = frozenset(['adminPass'])


def load(filename):
    """The JSON of the sample file ``filename`` (``area/name.json``)."""
    with open(os.path.join(SAMPLES, filename)) as sample:
        return json.load(sample)


class Samples:
    """The samples that one test sends and compares.

    Samples are named by their path under ``doc/api_samples`` without
    the ``-req.json`` or ``-resp.json`` ending (``leases/lease-create``).

    :param test: the test case, whose assertions report a mismatch.
    :param aliases: ``{text in answers: text in samples}``.
    """

    def __init__(self, test, aliases=None):
        self.test = test
        self.aliases = dict(aliases or {})
        # sample UUID -> the answer's, and back.
        self.bound = {}
        self._samples_of = {}

    def request(self, name):
        """The request sample ``<name>-req.json``, with the bound ids."""
        return self._bind_ids(load(name + '-req.json'))

    def check(self, name, answer):
        """Assert that ``answer`` is what ``<name>-resp.json`` shows.

        :returns: ``answer``.
        """
        filename = name + '-resp.json'
        path = os.path.join(SAMPLES, filename)
        aliased = self._aliased(answer)
        sample = (load(filename) if not GENERATE or os.path.exists(path)
                  else None)
        problems = []
        rendered = self._match(sample, aliased, name, problems)
        if GENERATE:
            with open(path, 'w') as out:
                json.dump(rendered, out, indent=4, sort_keys=True)
                out.write('\n')
        else:
            self.test.assertEqual([], problems, 'the answer differs from '
                                  'the sample ' + filename)
        return answer

    def _bind_ids(self, value, ids=None):
        """``value`` with the UUIDs of ``ids`` replaced.

        ``ids`` is by default the bound ones.
        """
        ids = self.bound if ids is None else ids
        if isinstance(value, dict):
            return {key: self._bind_ids(item, ids)
                    for key, item in value.items()}
        if isinstance(value, list):
            return [self._bind_ids(item, ids) for item in value]
        if isinstance(value, str):
            return re.sub(UUID, lambda found: ids.get(
                found.group(), found.group()), value)
        return value

    def _aliased(self, value):
        if isinstance(value, dict):
            return {key: self._aliased(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._aliased(item) for item in value]
        if isinstance(value, str):
            for text, alias in self.aliases.items():
                value = value.replace(text, alias)
        return value

    def _match(self, sample, answer, where, problems, key=None):
        """``answer`` with ``sample``'s placeholders where they match.

        What does not match is added to ``problems``.
        """
        if sample is None and GENERATE:
            return self._bind_ids(answer, self._samples_of)
        if isinstance(sample, dict) and isinstance(answer, dict):
            if set(sample) != set(answer):
                problems.append('%s: keys %s in the sample, %s in the answer'
                                % (where, sorted(set(sample) - set(answer)),
                                   sorted(set(answer) - set(sample))))
            return {k: self._match(sample.get(k), answer[k],
                                   '%s.%s' % (where, k), problems, k)
                    if k in sample else self._bind_ids(answer[k],
                                                       self._samples_of)
                    for k in answer}
        if isinstance(sample, list) and isinstance(answer, list):
            if len(sample) != len(answer):
                problems.append('%s: %d items in the sample, %d in the answer'
                                % (where, len(sample), len(answer)))
            return [self._match(s, a, '%s[%d]' % (where, i), problems)
                    for i, (s, a) in enumerate(zip(sample, answer))] + \
                answer[len(sample):]
        if isinstance(sample, str) and isinstance(answer, str):
            if key in ANY_STRING or self._match_text(sample, answer):
                return sample
        elif type(sample) is type(answer) and sample == answer:
            return sample
        problems.append('%s: %r in the sample, %r in the answer'
                        % (where, sample, answer))
        return self._bind_ids(answer, self._samples_of)

    def _match_text(self, sample, answer):
        """Whether ``answer`` is ``sample`` up to its UUIDs and dates.

        Binds the UUIDs when it is.
        """
        pattern, ids, at = [], [], 0
        for found in PLACEHOLDER.finditer(sample):
            pattern.append(re.escape(sample[at:found.start()]))
            if found.group(1):
                pattern.append('(%s)' % UUID)
                ids.append(found.group(1))
            else:
                pattern.append(re.sub(r'\d', r'\\d',
                                      re.escape(found.group(2))))
            at = found.end()
        pattern.append(re.escape(sample[at:]))
        matched = re.fullmatch(''.join(pattern), answer)
        if matched is None:
            return False
        pairs = list(zip(ids, matched.groups()))
        if any(self.bound.get(s, a) != a or self._samples_of.get(a, s) != s
               for s, a in pairs):
            return False
        for sample_id, answer_id in pairs:
            self.bound[sample_id] = answer_id
            self._samples_of[answer_id] = sample_id
        return True
