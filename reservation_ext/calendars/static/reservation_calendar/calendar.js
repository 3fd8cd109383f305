/*
 *    Licensed under the Apache License, Version 2.0 (the "License"); you may
 *    not use this file except in compliance with the License. You may obtain
 *    a copy of the License at
 *
 *         http://www.apache.org/licenses/LICENSE-2.0
 *
 *    Unless required by applicable law or agreed to in writing, software
 *    distributed under the License is distributed on an "AS IS" BASIS,
 *    WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or
 *    implied. See the License for the specific language governing
 *    permissions and limitations under the License.
 */

/*
 * The reservation calendars (reservation_ext.calendars): timelines drawn
 * with plain SVG, no library. Horizon loads this file on every page; it
 * acts only where a page has a ".reservation-calendar-page", whose
 * data-calendar says which: "project" (the project's leases by kind,
 * the request form, availability and proposal slots) or "admin" (hosts
 * by time). The data comes from the page (#reservation-calendar-data,
 * Django's json_script) and from the panel's JSON views.
 *
 * Plain ES5 on purpose: Horizon's offline compressor minifies it.
 */
(function () {
  'use strict';

  var SVG_NS = 'http://www.w3.org/2000/svg';
  var HOUR = 3600 * 1000;
  var DAY = 24 * HOUR;
  var LABEL_WIDTH = 220;
  var LANE_HEIGHT = 24;
  // Axis steps to choose from: the first that leaves room for labels.
  var STEPS = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY,
               14 * DAY, 30 * DAY, 91 * DAY, 365 * DAY];
  // The kinds of a host's load (reservation_ext.calendars.load.KINDS).
  var LOAD_NAMES = {preemptible: 'preemptible', gap_filling: 'gap-filling'};

  function html(name, attrs, parent, text) {
    return placed(document.createElement(name), attrs, parent, text);
  }

  function svg(name, attrs, parent, text) {
    return placed(document.createElementNS(SVG_NS, name), attrs, parent,
                  text);
  }

  // A new element with its attributes and text, added to its parent.
  function placed(node, attrs, parent, text) {
    setAttrs(node, attrs);
    if (text !== undefined && text !== null) {
      node.textContent = text;
    }
    if (parent) {
      parent.appendChild(node);
    }
    return node;
  }

  function setAttrs(node, attrs) {
    Object.keys(attrs || {}).forEach(function (key) {
      if (attrs[key] !== undefined && attrs[key] !== null) {
        node.setAttribute(key, attrs[key]);
      }
    });
  }

  function time(text) {
    return text ? new Date(text).getTime() : NaN;
  }

  // A bar's end; a preemptible server's bar has none: it runs on.
  function endTime(bar) {
    return bar.end ? time(bar.end) : Infinity;
  }

  function pad(number) {
    return number < 10 ? '0' + number : '' + number;
  }

  // UTC, as the lease API and the rest of the dashboard show dates.
  function formatDate(ms, withYear) {
    var d = new Date(ms);
    var day = pad(d.getUTCMonth() + 1) + '-' + pad(d.getUTCDate());
    if (withYear) {
      day = d.getUTCFullYear() + '-' + day;
    }
    return day + ' ' + pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes());
  }

  /* A time scale: [from, to] onto [0, width] pixels. */
  function Scale(from, to, width) {
    this.from = from;
    this.to = to;
    this.width = width;
  }
  Scale.prototype.x = function (ms) {
    var x = (ms - this.from) / (this.to - this.from) * this.width;
    return Math.max(0, Math.min(this.width, x));
  };
  Scale.prototype.ticks = function () {
    var span = this.to - this.from;
    var most = Math.max(2, Math.floor(this.width / 110));
    var step = STEPS[STEPS.length - 1];
    for (var i = 0; i < STEPS.length; i++) {
      if (span / STEPS[i] <= most) {
        step = STEPS[i];
        break;
      }
    }
    var ticks = [];
    for (var t = Math.ceil(this.from / step) * step; t <= this.to;
         t += step) {
      ticks.push(t);
    }
    return ticks;
  };

  /* The time range shown: "fit" (every bar and now) or N days on. */
  function range(choice, bars, now) {
    if (choice !== 'fit') {
      var days = parseInt(choice, 10) * DAY;
      return [now - days / 10, now + days];
    }
    var from = now - HOUR;
    var to = now + DAY;
    // "All leases": a preemptible server (no end) that started long ago
    // would squeeze them; its bar starts at the left edge then.
    bars.forEach(function (bar) {
      if (bar.end) {
        from = Math.min(from, time(bar.start));
        to = Math.max(to, time(bar.end));
      }
    });
    var margin = (to - from) / 30;
    return [from - margin, to + margin];
  }

  /* Lanes of a row: overlapping bars go on separate lanes. */
  function lanes(bars) {
    var ends = [];
    return bars.map(function (bar) {
      var start = time(bar.start);
      for (var lane = 0; lane < ends.length; lane++) {
        if (ends[lane] <= start) {
          break;
        }
      }
      ends[lane] = endTime(bar);
      return lane;
    });
  }

  function drawAxis(parent, scale) {
    var row = html('div', {'class': 'rc-row rc-axis-row'}, parent);
    html('div', {'class': 'rc-label'}, row, 'UTC');
    var axis = svg('svg', {'class': 'rc-axis', width: scale.width,
                           height: 22}, row);
    var withYear = new Date(scale.from).getUTCFullYear() !==
      new Date(scale.to).getUTCFullYear();
    scale.ticks().forEach(function (tick) {
      var x = scale.x(tick);
      svg('line', {x1: x, x2: x, y1: 14, y2: 22, 'class': 'rc-tick'}, axis);
      svg('text', {x: x + 2, y: 11, 'class': 'rc-tick-label'}, axis,
          formatDate(tick, withYear));
    });
  }

  /* One row: its label (HTML, given by labelFn) and its bars (SVG). */
  function drawRow(parent, scale, row, now, labelFn) {
    var node = html('div', {'class': 'rc-row', 'data-kind': row.kind,
                            'data-host': row.host}, parent);
    labelFn(html('div', {'class': 'rc-label'}, node), row);
    var laneOf = lanes(row.bars);
    var count = Math.max(1, Math.max.apply(null, laneOf.concat([0])) + 1);
    var lane = svg('svg', {'class': 'rc-lane', width: scale.width,
                           height: count * LANE_HEIGHT + 6}, node);
    scale.ticks().forEach(function (tick) {
      svg('line', {x1: scale.x(tick), x2: scale.x(tick), y1: 0,
                   y2: count * LANE_HEIGHT + 6, 'class': 'rc-grid'}, lane);
    });
    row.bars.forEach(function (bar, index) {
      drawBar(lane, scale, bar, 3 + laneOf[index] * LANE_HEIGHT);
    });
    if (now >= scale.from && now <= scale.to) {
      svg('line', {x1: scale.x(now), x2: scale.x(now), y1: 0,
                   y2: count * LANE_HEIGHT + 6, 'class': 'rc-now'}, lane);
    }
    return node;
  }

  function drawBar(lane, scale, bar, y) {
    var x1 = scale.x(time(bar.start));
    var x2 = Math.max(x1 + 3, bar.end ? scale.x(time(bar.end)) : scale.width);
    var group = svg('g', {
      'class': 'rc-bar rc-kind-' + bar.kind + ' rc-status-' +
        (bar.status || '').toLowerCase(),
      'data-lease': bar.lease, 'data-lease-id': bar.lease_id,
      'data-reservation-id': bar.reservation_id, 'data-server': bar.server,
      'data-server-id': bar.server_id, 'data-start': bar.start,
      'data-end': bar.end}, lane);
    svg('title', {}, group, bar.server_id ? serverTitle(bar) : barTitle(bar));
    svg('rect', {x: x1, y: y, width: x2 - x1, height: LANE_HEIGHT - 4,
                 rx: 3}, group);
    var clip = 'rc-clip-' + Math.random().toString(36).slice(2);
    var clipPath = svg('clipPath', {id: clip}, group);
    svg('rect', {x: x1, y: y, width: x2 - x1 - 2, height: LANE_HEIGHT}, clipPath);
    svg('text', {x: x1 + 4, y: y + LANE_HEIGHT - 9, 'clip-path': 'url(#' +
                 clip + ')'}, group, bar.server_id ?
        bar.server + ' (' + LOAD_NAMES[bar.kind] + ')' :
        bar.lease + (bar.summary ? ': ' + bar.summary : ''));
  }

  function barTitle(bar) {
    var lines = [bar.lease + ' (' + (bar.status || '?') + ')',
                 formatDate(time(bar.start), true) + ' to ' +
                 formatDate(time(bar.end), true) + ' UTC'];
    if (bar.summary) {
      lines.push(bar.summary);
    }
    if (bar.project_id) {
      lines.push('project ' + bar.project_id);
    }
    lines.push('reservation ' + bar.reservation_id);
    return lines.join('\n');
  }

  /* A server of a host's load: the admin sees whose it is. */
  function serverTitle(bar) {
    var lines = [LOAD_NAMES[bar.kind] + ' server ' + bar.server + ' (' +
                 (bar.server_status || '?') + ')'];
    if (bar.end) {
      lines.push(formatDate(time(bar.start), true) + ' to ' +
                 formatDate(time(bar.end), true) + ' UTC, lease ' +
                 bar.lease + ' (' + (bar.status || '?') + ')');
    } else {
      lines.push('since ' + formatDate(time(bar.start), true) +
                 ' UTC, until a booking needs its room');
    }
    lines.push('project ' + bar.project_id);
    lines.push('server ' + bar.server_id);
    return lines.join('\n');
  }

  /* A calendar: rows, a range chooser, redrawn on resize. */
  function Timeline(page, labelFn) {
    this.page = page;
    this.container = page.querySelector('#reservation-calendar');
    this.labelFn = labelFn;
    this.choice = 'fit';
    this.rows = [];
    this.now = Date.now();
    var self = this;
    page.querySelectorAll('.rc-range button').forEach(function (button) {
      button.addEventListener('click', function () {
        page.querySelectorAll('.rc-range button').forEach(function (b) {
          b.classList.remove('active');
        });
        button.classList.add('active');
        self.choice = button.getAttribute('data-days');
        self.draw();
      });
    });
    window.addEventListener('resize', function () {
      self.draw();
    });
  }
  Timeline.prototype.set = function (rows, now) {
    this.rows = rows;
    this.now = time(now) || Date.now();
    this.draw();
  };
  Timeline.prototype.draw = function () {
    var container = this.container;
    var self = this;
    container.textContent = '';
    var bars = [].concat.apply([], this.rows.map(function (row) {
      return row.bars;
    }));
    var span = range(this.choice, bars, this.now);
    var width = Math.max(300, container.clientWidth - LABEL_WIDTH - 12);
    var scale = new Scale(span[0], span[1], width);
    drawAxis(container, scale);
    this.rows.forEach(function (row) {
      drawRow(container, scale, row, self.now, self.labelFn);
    });
    if (!this.rows.length) {
      html('p', {'class': 'rc-empty'}, container, 'Nothing to show.');
    }
    container.setAttribute('data-drawn', bars.length);
  };

  function projectLabel(label, row) {
    html('strong', {}, label, row.label);
    html('span', {'class': 'rc-count'}, label, ' ' + row.bars.length);
  }

  function hostLabel(label, row) {
    html('strong', {'class': 'rc-host-name'}, label, row.host);
    var states = html('div', {'class': 'rc-states'}, label);
    badges(states, row);
    // Spaces between the badges, for the text of the row.
    [].slice.call(states.childNodes, 1).forEach(function (badge) {
      states.insertBefore(document.createTextNode(' '), badge);
    });
  }

  function badges(states, row) {
    if (row.power_state) {
      html('span', {'class': 'label rc-power rc-power-' + row.power_state,
                    title: row.power_state_since ?
                      'since ' + row.power_state_since : null},
           states, 'power ' + row.power_state);
    }
    if (row.power_managed === false) {
      html('span', {'class': 'label label-default rc-unmanaged'}, states,
           'not power managed');
    }
    if (row.power_next_transition) {
      html('span', {'class': 'label label-info rc-next'}, states,
           row.power_next_transition + ' at ' +
           formatDate(time(row.power_next_transition_at), false));
    }
    if (row.problem) {
      html('span', {'class': 'label label-warning rc-problem'}, states,
           row.problem);
    }
    if (!row.problem && row.reservable !== false) {
      html('span', {'class': 'label label-success rc-healthy'}, states, 'ok');
    }
    if (row.load_summary) {
      html('span', {'class': 'label label-default rc-load'}, states,
           row.load_summary);
    }
  }

  /* ---- The project page's request form, chart and slots. ---- */

  function formData(form) {
    return new FormData(form);
  }

  function post(url, data) {
    return fetch(url, {method: 'POST', body: data,
                       credentials: 'same-origin',
                       headers: {'X-Requested-With': 'XMLHttpRequest'}})
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) {
            throw new Error(body.error || response.statusText);
          }
          return body;
        }, function () {
          throw new Error(response.status + ' ' + response.statusText);
        });
      });
  }

  function getJson(url) {
    return fetch(url, {credentials: 'same-origin',
                       headers: {'X-Requested-With': 'XMLHttpRequest'}})
      .then(function (response) {
        return response.json();
      });
  }

  function showError(page, message) {
    var box = page.querySelector('#reservation-request-error');
    box.textContent = '';
    if (message) {
      html('div', {'class': 'alert alert-warning'}, box, message);
    }
  }

  function showFields(form) {
    var chosen = form.querySelector('[name=resource_type]').value;
    form.querySelectorAll('.rc-fields').forEach(function (group) {
      var shown = group.getAttribute('data-resource-type') === chosen;
      group.style.display = shown ? '' : 'none';
      // Hidden fields stay out of the request: "count" is two types'.
      group.querySelectorAll('input').forEach(function (input) {
        input.disabled = !shown;
      });
    });
  }

  /* The step chart of the free amount, the needed line and the slots. */
  function drawAvailability(box, answer, onSlot) {
    box.textContent = '';
    var width = Math.max(300, box.clientWidth - 20);
    var height = 160;
    var top = 12;
    var left = 46;
    var scale = new Scale(time(answer.start), time(answer.end),
                          width - left);
    var most = Math.max(answer.needed, 1);
    answer.steps.forEach(function (step) {
      most = Math.max(most, step.amount);
    });
    var y = function (amount) {
      return top + (height - top) * (1 - amount / (most * 1.15));
    };
    html('h4', {}, box, 'Free ' + answer.unit + ' over time');
    var chart = svg('svg', {'class': 'rc-chart', width: width,
                            height: height + 74}, box);
    var plot = svg('g', {transform: 'translate(' + left + ',0)'}, chart);
    drawChartAxes(plot, scale, y, most, height);
    drawSteps(plot, scale, y, answer.steps, height);
    svg('line', {'class': 'rc-needed', x1: 0, x2: scale.width,
                 y1: y(answer.needed), y2: y(answer.needed)}, plot);
    svg('text', {'class': 'rc-needed-label', x: scale.width - 4,
                 y: y(answer.needed) - 4, 'text-anchor': 'end'}, plot,
        'needed: ' + answer.needed);
    drawSlotLane(plot, scale, answer.slots, height + 30, onSlot);
    box.setAttribute('data-steps', answer.steps.length);
  }

  function drawChartAxes(plot, scale, y, most, height) {
    [0, Math.round(most / 2), most].forEach(function (amount) {
      svg('line', {'class': 'rc-grid', x1: 0, x2: scale.width,
                   y1: y(amount), y2: y(amount)}, plot);
      svg('text', {'class': 'rc-tick-label', x: -6, y: y(amount) + 4,
                   'text-anchor': 'end'}, plot, amount);
    });
    var withYear = false;
    scale.ticks().forEach(function (tick) {
      svg('text', {'class': 'rc-tick-label', x: scale.x(tick) + 2,
                   y: height + 14}, plot, formatDate(tick, withYear));
    });
  }

  function drawSteps(plot, scale, y, steps, height) {
    if (!steps.length) {
      return;
    }
    var line = '';
    var area = 'M' + scale.x(time(steps[0].start)) + ',' + height;
    steps.forEach(function (step, index) {
      var x1 = scale.x(time(step.start));
      var x2 = scale.x(time(step.end));
      var h = y(step.amount);
      line += (index ? 'L' : 'M') + x1 + ',' + h + 'L' + x2 + ',' + h;
      area += 'L' + x1 + ',' + h + 'L' + x2 + ',' + h;
      svg('rect', {'class': 'rc-step', x: x1, y: h,
                   width: Math.max(0, x2 - x1), height: height - h,
                   'data-amount': step.amount}, plot).appendChild(
        svg('title', {}, null, step.amount + ' free from ' +
            formatDate(time(step.start), true) + ' to ' +
            formatDate(time(step.end), true)));
    });
    area += 'L' + scale.x(time(steps[steps.length - 1].end)) + ',' + height +
      'Z';
    svg('path', {'class': 'rc-area', d: area}, plot);
    svg('path', {'class': 'rc-step-line', d: line}, plot);
  }

  function drawSlotLane(plot, scale, slots, y, onSlot) {
    svg('text', {'class': 'rc-tick-label', x: -6, y: y + 14,
                 'text-anchor': 'end'}, plot, 'slots');
    slots.forEach(function (slot, index) {
      var x1 = scale.x(time(slot.start));
      var x2 = Math.max(x1 + 4, scale.x(time(slot.end)));
      var group = svg('g', {'class': 'rc-slot', 'data-proposal-id': slot.id,
                            'data-index': index + 1}, plot);
      svg('title', {}, group, slotText(slot, index));
      svg('rect', {x: x1, y: y + (index % 2) * 14, width: x2 - x1,
                   height: 12, rx: 2}, group);
      group.addEventListener('click', function () {
        onSlot(slot);
      });
    });
  }

  function slotText(slot, index) {
    return 'Slot ' + (index + 1) + ': ' + formatDate(time(slot.start), true) +
      ' to ' + formatDate(time(slot.end), true) + ' UTC' +
      (slot.hosts ? ' on ' + slot.hosts.join(', ') : '');
  }

  function drawSlotList(box, slots, onSlot) {
    box.textContent = '';
    if (!slots.length) {
      html('p', {'class': 'rc-empty'}, box,
           'No window in the search span fits the request.');
      return;
    }
    html('h4', {}, box, 'Proposed slots (held for a few minutes; click one ' +
         'to make the lease)');
    var list = html('div', {'class': 'list-group'}, box);
    slots.forEach(function (slot, index) {
      var button = html('button', {
        type: 'button', 'class': 'list-group-item rc-slot-item',
        'data-proposal-id': slot.id, 'data-index': index + 1,
        'data-start': slot.start, 'data-end': slot.end}, list,
        slotText(slot, index));
      if (slot.expires_at) {
        html('small', {'class': 'text-muted'}, button,
             '  (held until ' + formatDate(time(slot.expires_at), false) +
             ' UTC)');
      }
      button.addEventListener('click', function () {
        onSlot(slot);
      });
    });
  }

  function ProjectPage(page) {
    this.page = page;
    this.form = page.querySelector('#reservation-request');
    this.timeline = new Timeline(page, projectLabel);
    var data = JSON.parse(
      page.querySelector('#reservation-calendar-data').textContent);
    this.timeline.set(data.rows, data.now);
    var self = this;
    var select = this.form.querySelector('[name=resource_type]');
    select.addEventListener('change', function () {
      showFields(self.form);
    });
    showFields(this.form);
    this.form.addEventListener('submit', function (event) {
      event.preventDefault();
      self.search();
    });
  }
  ProjectPage.prototype.search = function () {
    var self = this;
    var page = this.page;
    showError(page, null);
    page.querySelector('#reservation-created').textContent = '';
    page.setAttribute('data-searching', '1');
    post(page.getAttribute('data-search-url'), formData(this.form))
      .then(function (answer) {
        var onSlot = function (slot) {
          self.take(slot);
        };
        drawAvailability(page.querySelector('#reservation-availability'),
                         answer, onSlot);
        drawSlotList(page.querySelector('#reservation-slots'),
                     answer.slots, onSlot);
      }, function (error) {
        showError(page, error.message);
      }).then(function () {
        page.removeAttribute('data-searching');
      });
  };
  ProjectPage.prototype.take = function (slot) {
    var self = this;
    var page = this.page;
    var data = new FormData();
    data.append('csrfmiddlewaretoken', this.form.querySelector(
      '[name=csrfmiddlewaretoken]').value);
    data.append('name', this.form.querySelector('[name=name]').value);
    data.append('proposal_id', slot.id);
    showError(page, null);
    post(page.getAttribute('data-create-url'), data).then(function (answer) {
      var lease = answer.lease;
      var box = page.querySelector('#reservation-created');
      box.textContent = '';
      html('div', {'class': 'alert alert-success rc-created-lease',
                   'data-lease-id': lease.id}, box,
           'Lease ' + lease.name + ' created: ' +
           formatDate(time(lease.start), true) + ' to ' +
           formatDate(time(lease.end), true) + ' UTC (' + lease.status +
           ').');
      // The other proposals of the request are released now.
      page.querySelector('#reservation-slots').textContent = '';
      page.querySelector('#reservation-availability').textContent = '';
      return self.refresh();
    }).catch(function (error) {
      showError(page, error.message);
    });
  };
  ProjectPage.prototype.refresh = function () {
    var self = this;
    return getJson(this.page.getAttribute('data-leases-url'))
      .then(function (answer) {
        if (answer.rows) {
          self.timeline.set(answer.rows, answer.now);
        }
      });
  };

  function AdminPage(page) {
    var data = JSON.parse(
      page.querySelector('#reservation-calendar-data').textContent);
    this.timeline = new Timeline(page, hostLabel);
    this.timeline.set(data.hosts, data.now);
  }

  function start() {
    var page = document.querySelector('.reservation-calendar-page');
    if (!page || page.getAttribute('data-started')) {
      return;
    }
    page.setAttribute('data-started', '1');
    if (page.getAttribute('data-calendar') === 'admin') {
      new AdminPage(page);
    } else {
      new ProjectPage(page);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
