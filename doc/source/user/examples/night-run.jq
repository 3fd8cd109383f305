{"name": "night-run", "start_date": "now", "end_date": $end_date,
 "before_end_date": $before_end_date,
 "reservations": [{"resource_type": "physical:host", "min": 2, "max": 2,
                   "before_end": "snapshot", "on_end": "recycle",
                   "grace_period": "1m"}]}
