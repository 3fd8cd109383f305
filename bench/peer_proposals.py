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

"""The peer of bench/proposals.py: what a Blazar 18 user does instead.

Run by ``bench/proposals.py --peer`` under the peer virtualenv (Blazar
installed, not this project). Blazar has no server-side search of free
windows: a user (a calendar, python-chi's "next free timeslot") lists the
hosts with their extra capabilities (``GET /v1/os-hosts``, one
``get_computehost`` per host) and every allocation (``GET
/v1/os-hosts/allocations``), then searches client-side. This script fills
Blazar's DB with the generator's workload (``blazar_alloc.py``'s own
``populate``), calls the same plugin methods those API calls run
(``PhysicalHostPlugin.list_computehosts`` and ``list_allocations``, on a
plugin built without clients, as blazar_alloc.py builds it), and searches
the first five windows of 4 free hosts for 2 days as the contract defines
them, each window's hosts kept out of the next. ``availability-*`` times
the listing and the count of free hosts over 30 days.

Prints one JSON line per case: ``case``, ``p50_ms``, ``sql_per_request``,
``starts`` (the windows found).
"""

import argparse
import bisect
import contextlib
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
import warnings

import by_path

WANT = 4
DURATION = datetime.timedelta(days=2)
COUNT = 5
AVAILABILITY = datetime.timedelta(days=30)
FILTERS = {'none': lambda host: True,
           'gpu': lambda host: host.get('gpu') == 'true'}


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--shared', required=True)
    parser.add_argument('--reps', type=int, default=20)
    parser.add_argument('--first', required=True)
    parser.add_argument('--last', required=True)
    return parser.parse_known_args()


def client_side_windows(hosts, allocations, first, last):
    """The first windows, searched as a client with the listings would."""
    busy = {host: sorted(windows) for host, windows in allocations.items()
            if host in hosts}
    found = []
    previous = None
    while len(found) < COUNT:
        candidates = sorted({first} | {end for windows in busy.values()
                                       for _start, end in windows
                                       if end >= first})
        pick = None
        for start in candidates:
            if start > last:
                break
            if previous is not None and start <= previous:
                continue
            free = [host for host in sorted(busy)
                    if _free(busy[host], start, start + DURATION)]
            if len(free) >= WANT:
                pick = (start, free[:WANT])
                break
        if pick is None:
            break
        found.append(pick[0])
        previous = pick[0]
        for host in pick[1]:
            bisect.insort(busy[host], (pick[0], pick[0] + DURATION))
    return found


def _free(windows, start, end):
    index = bisect.bisect_left(windows, (end,))
    return index == 0 or windows[index - 1][1] <= start


def free_counts(hosts, allocations, first):
    """How many hosts are free, step by step, over the 30 days."""
    end = first + AVAILABILITY
    changes = {}
    for host in hosts:
        for start, stop in allocations.get(host, ()):
            if start < end and stop > first:
                changes[max(start, first)] = changes.get(
                    max(start, first), 0) - 1
                changes[min(stop, end)] = changes.get(min(stop, end), 0) + 1
    changes.setdefault(first, 0)
    level, steps = len(hosts), []
    for moment in sorted(changes):
        level += changes[moment]
        steps.append((moment, level))
    return steps


def main():
    args, generator_argv = parse_args()
    warnings.filterwarnings('ignore')
    generator = by_path.blazar_alloc(args.shared)
    gen_args = generator.parse_args(generator_argv)
    workload = generator.generate_workload(gen_args)
    first = datetime.datetime.fromisoformat(args.first)
    last = datetime.datetime.fromisoformat(args.last)

    # Blazar's modules exist in the peer virtualenv only.
    import blazar.config  # noqa: F401 (registers Blazar's options)
    from blazar.db import api as db_api
    from blazar.db.sqlalchemy import facade_wrapper
    from blazar.db.sqlalchemy import models
    from blazar.plugins.oshosts import host_plugin
    from oslo_config import cfg
    from oslo_utils import timeutils
    from sqlalchemy import event

    tmp = tempfile.mkdtemp()
    cfg.CONF.set_override('connection', 'sqlite:///' + os.path.join(
        tmp, 'blazar.sqlite'), group='database')
    db_api.setup_db()
    engine = facade_wrapper._get_facade().writer.get_engine()
    generator.add_fk_indexes(engine, models.Lease.metadata)
    generator.populate(engine, models, workload, gen_args)
    statements = [0]
    event.listen(engine, 'before_cursor_execute',
                 lambda *a: statements.__setitem__(0, statements[0] + 1))
    plugin = object.__new__(host_plugin.PhysicalHostPlugin)
    # Blazar lists allocations from "now" on: the start of the year.
    timeutils.set_time_override(first)

    def listings():
        with contextlib.redirect_stdout(generator.LineCounter()):
            hosts = plugin.list_computehosts({})
            listed = plugin.list_allocations({})
        allocations = {}
        for entry in listed:
            allocations[entry['resource_id']] = [
                (_date(r['start_date']), _date(r['end_date']))
                for r in entry['reservations']]
        return hosts, allocations

    for name, match in FILTERS.items():
        for case, answer in (
                ('propose-' + name, lambda hosts, allocations:
                 client_side_windows(hosts, allocations, first, last)),
                ('availability-' + name, lambda hosts, allocations:
                 free_counts(hosts, allocations, first))):
            times, counts, result = [], [], None
            for _rep in range(args.reps):
                statements[0] = 0
                began = time.perf_counter()
                hosts, allocations = listings()
                chosen = {host['id'] for host in hosts if match(host)}
                result = answer(chosen, allocations)
                times.append((time.perf_counter() - began) * 1e3)
                counts.append(statements[0])
            line = {'case': case, 'reps': args.reps,
                    'p50_ms': round(statistics.median(times), 3),
                    'sql_per_request': statistics.median(counts)}
            if case.startswith('propose'):
                line['starts'] = [start.strftime('%Y-%m-%dT%H:%M:%S.%f')
                                  for start in result]
            else:
                line['free_host_hours'] = _host_hours(result, first)
            print(json.dumps(line), flush=True)
    return 0


def _host_hours(steps, first):
    """The area under the steps of free hosts, in host-hours."""
    total, moment, level = 0.0, first, None
    for change, new_level in steps:
        if level is not None:
            total += level * (change - moment).total_seconds() / 3600
        moment, level = change, new_level
    return round(total, 3)


def _date(value):
    if isinstance(value, datetime.datetime):
        return value
    return datetime.datetime.fromisoformat(str(value))


if __name__ == '__main__':
    sys.exit(main())
