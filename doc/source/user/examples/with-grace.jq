{"name": "with-grace", "start_date": $start_date, "end_date": $end_date,
 "reservations": [{"resource_type": "physical:host", "min": 4, "max": 4,
                   "on_end": "delete_instances", "grace_period": "12h"}]}
