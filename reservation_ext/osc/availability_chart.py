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

"""``openstack reservation availability chart``: what is free, drawn as text.

The same query as ``availability show``, drawn for a terminal: a strip
over the whole period, one column per equal slice of time (the least
amount free in it: what a lease of that slice could count on), then one
line per step with its amount as a bar. With ``--per-host``, a strip per
host, blank where the host is taken. All times are UTC.
"""

import datetime

from osc_lib.command import command
from osc_lib import exceptions

from reservation_ext.osc import v1

# Eight heights of a block, lowest first; a blank is nothing free.
_BLOCKS = '▁▂▃▄▅▆▇█'
_FULL = '█'
_BAR_WIDTH = 30
_LABEL = '%Y-%m-%d %H:%M'
_LABEL_WIDTH = len('2030-01-10 09:00')


class ChartAvailability(command.Command):
    """Draw how much matching reservable capacity is free over time."""

    def get_parser(self, prog_name):
        """Return the arguments of ``availability show``, and ``--width``."""
        parser = super().get_parser(prog_name)
        v1.add_availability_arguments(parser)
        parser.add_argument('--width', type=int, default=60,
                            metavar='<columns>',
                            help='Columns of the strip over time '
                                 '(default 60).')
        return parser

    def take_action(self, parsed_args):
        """Read the availability and write its chart to stdout."""
        if parsed_args.width < 10:
            raise exceptions.CommandError('--width must be at least 10')
        availability = v1.read_availability(self.app, parsed_args)
        lines = (per_host(availability, parsed_args.width)
                 if parsed_args.per_host
                 else render(availability, parsed_args.width))
        self.app.stdout.write('\n'.join(lines) + '\n')


def render(availability, width):
    """The chart of an ``availability`` answer, as lines of text."""
    start, end = _date(availability['start']), _date(availability['end'])
    steps = [(_date(step['start']), _date(step['end']), step['amount'])
             for step in availability['free']]
    most = max([amount for _start, _end, amount in steps] + [0])
    lines = ['free %s (%s), %s to %s UTC, at most %d' % (
        availability['unit'], availability['resource_type'],
        start.strftime(_LABEL), end.strftime(_LABEL), most)]
    lines.append('%s ▕%s▏' % (' ' * _LABEL_WIDTH, strip(
        steps, start, end, width, most)))
    lines.append('%s  %s' % (' ' * _LABEL_WIDTH, axis(start, end, width)))
    for step_start, _step_end, amount in steps:
        lines.append('%s %s %d' % (step_start.strftime(_LABEL),
                                   _bar(amount, most).ljust(_BAR_WIDTH),
                                   amount))
    if steps:
        lines.append(steps[-1][1].strftime(_LABEL))
    return lines


def per_host(availability, width):
    """A strip per host: full where the host is free, blank elsewhere."""
    start, end = _date(availability['start']), _date(availability['end'])
    hosts = availability.get('hosts', [])
    name_width = max([len(host['host']) for host in hosts] + [4])
    lines = ['free hosts (%s), %s to %s UTC' % (
        availability['resource_type'], start.strftime(_LABEL),
        end.strftime(_LABEL))]
    for host in hosts:
        steps = [(_date(step['start']), _date(step['end']), 1)
                 for step in host['free']]
        row = strip(steps, start, end, width, 1)
        lines.append('%s ▕%s▏' % (host['host'].ljust(name_width), row))
    lines.append('%s  %s' % (' ' * name_width, axis(start, end, width)))
    return lines


def strip(steps, start, end, width, most):
    """One character per ``width``-th of the period: the least free in it.

    ``steps`` are ``(start, end, amount)``; time outside every step has
    nothing free.
    """
    period = (end - start) / width
    cells = []
    for column in range(width):
        left = start + period * column
        # Microsecond rounding must not leave the last column short.
        right = end if column == width - 1 else left + period
        cells.append(_block(_least(steps, left, right), most))
    return ''.join(cells)


def axis(start, end, width):
    """The strip's ends under it: the first and the last time."""
    left, right = start.strftime(_LABEL), end.strftime(_LABEL)
    gap = width - len(left) - len(right)
    if gap < 1:
        return left
    return left + ' ' * gap + right


def _least(steps, left, right):
    """The least amount over ``[left, right)``; 0 where no step covers."""
    covered, least = datetime.timedelta(0), None
    for step_start, step_end, amount in steps:
        overlap = min(step_end, right) - max(step_start, left)
        if overlap > datetime.timedelta(0):
            covered += overlap
            least = amount if least is None else min(least, amount)
    if least is None or covered < right - left:
        return 0
    return least


def _block(amount, most):
    if amount <= 0 or most <= 0:
        return ' '
    return _BLOCKS[max(0, -(-amount * len(_BLOCKS) // most) - 1)]


def _bar(amount, most):
    if amount <= 0 or most <= 0:
        return ''
    return _FULL * max(1, round(amount * _BAR_WIDTH / most))


def _date(text):
    """A naive UTC datetime of the API's ``2030-01-10T09:00:00.000000``."""
    return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')) \
        .replace(tzinfo=None)
