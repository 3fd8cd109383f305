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

"""The project calendar's URLs: the page and its JSON calls."""

from django.urls import re_path

from reservation_ext.calendars.project import views

urlpatterns = [
    re_path(r'^$', views.IndexView.as_view(), name='index'),
    re_path(r'^leases\.json$', views.leases_json, name='leases'),
    re_path(r'^search\.json$', views.search_json, name='search'),
    re_path(r'^create\.json$', views.create_json, name='create'),
]
